// Package page is the pipeline page that --view serves and --trace
// writes: one HTML file, its script and style inline.
package page

import (
	_ "embed"
	"strings"
)

//go:embed page.html
var html string

// HTML returns the page with its <!--TRACE--> marker replaced by inject.
func HTML(inject string) []byte {
	return []byte(strings.Replace(html, "<!--TRACE-->", inject, 1))
}
