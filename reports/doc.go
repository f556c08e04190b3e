// Package reports renders what locksim finds for people and machines: a text
// timeline of one run with its faults and violations marked, porcupine's
// HTML visualisation with faults as annotations, and the comparison matrix of
// variants × fault classes as Markdown, JSON and HTML with charts.
//
// Every renderer except PorcupineHTML is deterministic: the same input gives
// the same bytes, so outputs can be golden-tested and diffed in review.
package reports
