package faults

// feature is one kind of fault a plan can contain, finer than a class
// (class loss has loss, duplicate and latency). Swarm testing switches
// features on and off per seed; Plan.Faults names them.
type feature int

const (
	featLoss         feature = iota // network.loss_ppm
	featDuplicate                   // network.duplicate_ppm
	featLatency                     // network.extra_latency_max
	featReplyLoss                   // network.reply_loss_ppm
	featCrash                       // crash events that keep data
	featAmnesia                     // crash events with wipe
	featPartition                   // partition events
	featClog                        // clog events
	featOffset                      // clock offsets
	featDrift                       // clock drift
	featJump                        // clock jump events
	featPause                       // timed client pauses
	featPoints                      // fault-point pauses
	featThreads                     // threads_per_host override
	featTopology                    // topology events
	featZone                        // hosts in local time zones
	featNoQuarantine                // deployment.no_quarantine: the first lapse
	featNoFencing                   // deployment.no_fencing
	featMisuse                      // use: the application's misuse (real code only)
	numFeatures

	// numWorldFeatures counts the faults of the world, which swarm testing
	// switches on and off; the deployment lapses after them are drawn only
	// to break an envelope on purpose.
	numWorldFeatures = featNoQuarantine
)

// features gives each feature its name and the class that allows it.
var features = [numFeatures]struct {
	name  string
	class Class
}{
	featLoss:      {"loss", ClassLoss},
	featDuplicate: {"duplicate", ClassLoss},
	featLatency:   {"latency", ClassLoss},
	featReplyLoss: {"reply-loss", ClassAmbiguous},
	featCrash:     {"crash", ClassCrash},
	featAmnesia:   {"amnesia", ClassAmnesia},
	featPartition: {"partition", ClassPartition},
	featClog:      {"clog", ClassPartition},
	featOffset:    {"offset", ClassSkew},
	featDrift:     {"drift", ClassSkew},
	featJump:      {"jump", ClassJump},
	featPause:     {"pause", ClassPause},
	featPoints:    {"points", ClassPause},
	featThreads:   {"threads", ClassThreads},
	featTopology:  {"topology", ClassTopology},
	featZone:      {"localtime", ClassLocalTime},
	// Deployment lapses are drawn only to break an envelope on purpose;
	// each sits in the class whose faults it makes matter.
	featNoQuarantine: {"no-quarantine", ClassAmnesia},
	featNoFencing:    {"no-fencing", ClassPause},
	// The application's misuse is drawn for real code only, apart from
	// the swarm (DrawUse): holders that stall are the pause class's.
	featMisuse: {"misuse", ClassPause},
}

func (f feature) String() string { return features[f].name }

// use is one place in a plan where a feature appears.
type use struct {
	feature feature
	field   string
}

// uses lists every non-zero fault setting of p, in field order.
func (p Plan) uses() []use {
	var out []use
	add := func(on bool, f feature, field string) {
		if on {
			out = append(out, use{f, field})
		}
	}
	add(p.Network.LossPPM != 0, featLoss, "network.loss_ppm")
	add(p.Network.DuplicatePPM != 0, featDuplicate, "network.duplicate_ppm")
	add(p.Network.ExtraLatencyMax != 0, featLatency, "network.extra_latency_max")
	add(p.Network.ReplyLossPPM != 0, featReplyLoss, "network.reply_loss_ppm")
	for i, c := range p.Clocks {
		add(c.Offset != 0, featOffset, index("clocks", i)+".offset")
		add(c.DriftPPM != 0, featDrift, index("clocks", i)+".drift_ppm")
	}
	add(p.ThreadsPerHost != 0, featThreads, "threads_per_host")
	add(p.Points != Points{}, featPoints, "points")
	for i := range p.Zones {
		add(true, featZone, index("zones", i))
	}
	for i, e := range p.Events {
		if f, ok := eventFeature(e); ok {
			add(true, f, index("events", i))
		}
	}
	add(p.Deployment.NoQuarantine, featNoQuarantine, "deployment.no_quarantine")
	add(p.Deployment.NoFencing, featNoFencing, "deployment.no_fencing")
	add(p.Use != Use{}, featMisuse, "use")
	return out
}

// eventFeature is the feature an event belongs to (false: unknown kind).
func eventFeature(e Event) (feature, bool) {
	switch e.Kind {
	case Crash:
		if e.Wipe {
			return featAmnesia, true
		}
		return featCrash, true
	case Partition:
		return featPartition, true
	case Clog:
		return featClog, true
	case ClockJump:
		return featJump, true
	case Pause:
		return featPause, true
	case Topology:
		return featTopology, true
	}
	return 0, false
}

// Faults names the kinds of fault p contains, each once, in a fixed order
// (loss, duplicate, latency, reply-loss, crash, amnesia, partition, clog,
// offset, drift, jump, pause, points, threads, topology, no-quarantine,
// no-fencing). A fault-free plan has none.
func (p Plan) Faults() []string {
	var seen [numFeatures]bool
	for _, u := range p.uses() {
		seen[u.feature] = true
	}
	var out []string
	for f := feature(0); f < numFeatures; f++ {
		if seen[f] {
			out = append(out, f.String())
		}
	}
	return out
}

// Size measures how much goes wrong in p, for minimisation reports: one per
// event, per non-zero network knob, per clock entry, and one each for fault
// points, a threads override and each deployment lapse. The zero Plan has
// size 0.
func (p Plan) Size() int {
	n := len(p.Events) + len(p.Clocks) + len(p.Zones)
	for _, on := range []bool{p.Network.LossPPM != 0, p.Network.DuplicatePPM != 0,
		p.Network.ReplyLossPPM != 0, p.Network.ExtraLatencyMax != 0,
		p.Points.PausePPM != 0 || p.Points.PauseFor != 0, p.ThreadsPerHost != 0,
		p.Deployment.NoQuarantine, p.Deployment.NoFencing, p.Use != Use{}} {
		if on {
			n++
		}
	}
	return n
}
