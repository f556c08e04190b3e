package model

import "fmt"

// clientName is the name a story uses for client i: its Name from
// History.Clients, or "c<i>" when the history does not describe it (a
// malformed history must still produce a readable verdict).
func clientName(h History, i int) string {
	if i >= 0 && i < len(h.Clients) && h.Clients[i].Name != "" {
		return h.Clients[i].Name
	}
	return fmt.Sprintf("c%d", i)
}

// Seconds formats a true time or duration in nanoseconds as seconds with
// milliseconds ("61.002s"). Integer arithmetic keeps it exact and the same on
// every machine.
func Seconds(ns int64) string {
	sign := ""
	if ns < 0 {
		sign, ns = "-", -ns
	}
	return fmt.Sprintf("%s%d.%03ds", sign, ns/1e9, ns%1e9/1e6)
}
