// Package degrade holds wsh's pure decisions about a jailed command: what an
// outcome means (Classify), the sticky per-Runner state, and the one
// warning's text.
package verdict
