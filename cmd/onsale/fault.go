package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/stagedoor/stagedoor/internal/onsale"
)

// faultTimeout bounds a fault's command.
const faultTimeout = time.Minute

// commandFault is a fault that runs cmd with bash -c, its output copied to
// out line by line under the fault's name. The command gets the sale in its
// environment: ONSALE_URL, ONSALE_EVENT_ID and ONSALE_ORGANIZER_ID.
func commandFault(name string, at time.Duration, cmd string, out io.Writer) onsale.Fault {
	return onsale.Fault{Name: name, At: at, Do: func(ctx context.Context, s onsale.Sale) error {
		ctx, cancel := context.WithTimeout(ctx, faultTimeout)
		defer cancel()
		c := exec.CommandContext(ctx, "bash", "-c", cmd)
		c.Env = append(c.Environ(), "ONSALE_URL="+s.URL, "ONSALE_EVENT_ID="+s.EventID, "ONSALE_ORGANIZER_ID="+s.OrganizerID)
		output, err := c.CombinedOutput()
		sc := bufio.NewScanner(strings.NewReader(string(output)))
		for sc.Scan() {
			fmt.Fprintf(out, "onsale: fault %q: %s\n", name, sc.Text())
		}
		if err != nil {
			return fmt.Errorf("%s: %w", cmd, err)
		}
		return nil
	}}
}
