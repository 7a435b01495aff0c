package quota

// ParentFunc returns the parent of a cohort and whether the cohort exists as
// an object. A cohort without an object (implicit) has no parent.
type ParentFunc func(cohort string) (parent string, exists bool)

// Ancestry is the chain of cohorts above a node, nearest first.
type Ancestry struct {
	// Chain lists the cohorts from the node's own cohort up to the root, or up
	// to the first repeated cohort when there is a cycle.
	Chain []string
	// Cycle lists the cohorts of the loop, in parent order, starting at the
	// first cohort of Chain that is part of it; empty when the chain ends at a
	// root.
	Cycle []string
}

// HasCycle tells whether the chain loops.
func (a Ancestry) HasCycle() bool { return len(a.Cycle) > 0 }

// Ancestors follows parent links from cohort upward. It always terminates: a
// repeated cohort ends the walk and reports the loop.
func Ancestors(cohort string, parentOf ParentFunc) Ancestry {
	var a Ancestry
	index := map[string]int{}
	for current := cohort; current != ""; {
		if at, seen := index[current]; seen {
			a.Cycle = append([]string(nil), a.Chain[at:]...)
			return a
		}
		index[current] = len(a.Chain)
		a.Chain = append(a.Chain, current)
		parent, exists := parentOf(current)
		if !exists {
			break
		}
		current = parent
	}
	return a
}
