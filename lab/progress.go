package lab

import "time"

// Progress hears about pipeline steps, for people watching.
type Progress interface {
	// Started is called when a step begins.
	Started(step string)
	// Finished is called when a step ends, with its error if it failed.
	Finished(step string, took time.Duration, err error)
}

type discardProgress struct{}

func (discardProgress) Started(string)                        {}
func (discardProgress) Finished(string, time.Duration, error) {}
