// Command flood is TestAFloodOfProbesAndScrapesShedsNoPage's load, built
// without the race detector so that its own CPU is an ordinary client's: for
// -for, -clients clients each read every -flood URL in a tight loop, while one
// more loads the front end's pages from -base one after another. It prints
// what it saw as one JSON object.
package main

import (
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	base := flag.String("base", "", "the API's base URL")
	targets := flag.String("flood", "", "comma-separated URLs to flood (none: pages only)")
	clients := flag.Int("clients", 8, "clients per flood URL")
	dur := flag.Duration("for", 4*time.Second, "how long the pages load")
	flag.Parse()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	flooded := map[string]*atomic.Int64{}
	if *targets != "" {
		for _, url := range strings.Split(*targets, ",") {
			flooded[url] = &atomic.Int64{}
			for range *clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					client := &http.Client{Timeout: 10 * time.Second}
					for {
						select {
						case <-stop:
							return
						default:
						}
						resp, err := client.Get(url)
						if err != nil {
							continue
						}
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						flooded[url].Add(1)
					}
				}()
			}
		}
	}
	out := struct {
		Loads    int              `json:"loads"`
		Refused  int              `json:"refused"`
		Statuses map[int]int      `json:"statuses"`
		Flooded  map[string]int64 `json:"flooded"`
		Error    string           `json:"error,omitempty"`
	}{Statuses: map[int]int{}, Flooded: map[string]int64{}}
	client := &http.Client{Timeout: 10 * time.Second}
pages:
	for start := time.Now(); time.Since(start) < *dur; {
		for _, path := range []string{"/", "/ui/app.css", "/ui/js/app.js", "/v1/events"} {
			resp, err := client.Get(*base + path)
			if err != nil {
				out.Error = err.Error()
				break pages
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			out.Loads++
			out.Statuses[resp.StatusCode]++
			if resp.StatusCode != http.StatusOK {
				out.Refused++
			}
		}
	}
	close(stop)
	wg.Wait()
	for url, n := range flooded {
		out.Flooded[url] = n.Load()
	}
	_ = json.NewEncoder(os.Stdout).Encode(out)
}
