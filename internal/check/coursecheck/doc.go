// Package coursecheck holds tests of the course as a whole: that its
// source links land where they say, and that every chapter is complete.
package coursecheck
