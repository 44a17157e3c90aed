package protect

import (
	"fmt"
	"sync/atomic"
)

// ModeSwitch holds a protection's mode, read on the request path with one
// atomic load. The zero ModeSwitch is Enforce. Safe for concurrent use.
type ModeSwitch struct{ v atomic.Int32 }

// switchModes are the modes by their value in a ModeSwitch.
var switchModes = [...]Mode{Enforce, Shadow, Off}

// Load is the mode in force.
func (s *ModeSwitch) Load() Mode { return switchModes[s.v.Load()] }

// Store sets m; "" is Enforce. Any other mode than Enforce, Shadow and Off
// panics: callers read modes with ParseMode or check them with CheckMode.
func (s *ModeSwitch) Store(m Mode) {
	if m == "" {
		m = Enforce
	}
	for i, x := range switchModes {
		if x == m {
			s.v.Store(int32(i))
			return
		}
	}
	panic(fmt.Sprintf("protect: mode %q is not enforce, shadow or off", m))
}
