// Package coursecheck holds tests of the course as a whole: that its
// source links land where they say, that every chapter is complete and
// has the one chapter shape, and how much of each chapter's lesson files is lesson.
package coursecheck
