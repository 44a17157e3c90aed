package onsale

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stagedoor/stagedoor/internal/auth"
)

// Pollers are the cheap part of a crowd: buyers who join the waiting room and
// wait, polling at the web page's cadence once it has waited a while
// (web/static/js/waitroom.js: 1 s, doubling to 10 s, never past the
// estimated wait; the pollers start at 10 s, having joined in the phase
// before), sending back the queue
// token of each answer (Queue-Token), and who leave when their wait ends
// (admitted, sold out, closed, or the sale's end): they never hold. They share
// a few connections and are counted in aggregate, not request by request, so
// that 100,000 of them fit in the simulator's memory.

// The page's cadence.
const (
	pollFirst = time.Second
	pollMax   = 10 * time.Second
)

// PollerStats are what the pollers did, and what their requests cost Redis.
type PollerStats struct {
	Pollers  int              `json:"pollers"`
	Joins    int64            `json:"joins"`
	Polls    int64            `json:"polls"`
	ByStatus map[string]int64 `json:"by_status"` // "200", "429", "no answer"
	Ended    map[string]int64 `json:"ended"`     // admitted, sold_out, closed, gone (404), cut
	P50MS    float64          `json:"poll_p50_ms"`
	P99MS    float64          `json:"poll_p99_ms"`
	// Redis is the cost of each phase (joins alone, polls alone before the
	// draw, the whole sale), when the run could read Redis (-redis-url).
	Redis []RedisPhase `json:"redis,omitempty"`
	// RedisNote says why a phase is missing.
	RedisNote string `json:"redis_note,omitempty"`
}

// pollers runs the crowd's pollers and counts what they do.
type pollers struct {
	base     string
	sale     Sale
	clients  []*http.Client
	sessions []auth.Session

	joins, polls atomic.Int64
	mu           sync.Mutex
	byStatus     map[string]int64
	ended        map[string]int64
	latency      latencyHistogram
}

func newPollers(o Options, sale Sale, sessions []auth.Session) *pollers {
	p := &pollers{base: strings.TrimRight(o.URL, "/"), sale: sale, sessions: sessions,
		byStatus: map[string]int64{}, ended: map[string]int64{}}
	conns := max(1, o.PollerConns)
	for i := range conns {
		var t *http.Transport
		if o.SourceAddrs {
			t = newTransport(pollerAddr(i))
		} else {
			t = newTransport(nil)
		}
		t.MaxIdleConns, t.MaxIdleConnsPerHost = 64, 64
		p.clients = append(p.clients, &http.Client{Transport: t, Timeout: requestTimeout})
	}
	return p
}

// join has every poller join, spread evenly over window; it returns when all
// have answered.
func (p *pollers) join(ctx context.Context, window time.Duration, tokens []string) {
	var wg sync.WaitGroup
	start := time.Now()
	for i := range p.sessions {
		at := start.Add(time.Duration(float64(window) * float64(i) / float64(len(p.sessions))))
		if !sleep(ctx, time.Until(at)) {
			break
		}
		wg.Go(func() {
			st, ok := p.ask(ctx, i, http.MethodPost, "")
			p.joins.Add(1)
			if ok {
				tokens[i] = st.QueueToken
			}
		})
	}
	wg.Wait()
}

// wait has every poller poll until their wait ends, as a page that has
// waited a while does: every pollMax (or sooner when the estimated wait is
// shorter), their first polls spread over one interval. It starts once every
// poller has joined, so that polls are measured apart from joins.
func (p *pollers) wait(ctx context.Context, tokens []string, seed int64) {
	var wg sync.WaitGroup
	for i := range p.sessions {
		rng := rand.New(rand.NewPCG(uint64(seed), uint64(i)+7))
		wg.Go(func() {
			token := tokens[i]
			// They joined a while ago (the join phase): their page polls every
			// pollMax by now, and they do not all poll in the same second.
			interval := pollMax
			if !sleep(ctx, time.Duration(rng.Int64N(int64(pollMax)))) {
				p.end("cut")
				return
			}
			for {
				st, ok := p.ask(ctx, i, http.MethodGet, token)
				p.polls.Add(1)
				if ctx.Err() != nil {
					p.end("cut")
					return
				}
				if ok {
					if st.QueueToken != "" {
						token = st.QueueToken
					}
					if end := pollEnd(st); end != "" {
						p.end(end)
						return
					}
				}
				next := interval
				if ok && st.EstimatedWait != nil {
					next = min(next, time.Duration(*st.EstimatedWait)*time.Second)
				}
				if !sleep(ctx, max(pollFirst, next)) {
					p.end("cut")
					return
				}
				interval = min(pollMax, interval*2)
			}
		})
	}
	wg.Wait()
}

// pollerStatus is the part of a queue answer a poller reads.
type pollerStatus struct {
	Status        string `json:"status"`
	ClosedReason  string `json:"closed_reason"`
	EstimatedWait *int64 `json:"estimated_wait_seconds"`
	QueueToken    string `json:"queue_token"`
	gone          bool   // 404: not in the queue
}

// pollEnd is how a wait ends with this answer, "" while it goes on.
func pollEnd(st pollerStatus) string {
	switch {
	case st.gone:
		return "gone"
	case st.Status == "admitted":
		return "admitted"
	case st.Status == "sold_out":
		return "sold_out"
	case st.Status == "closed" && st.ClosedReason != "seats_held":
		return "closed"
	}
	return ""
}

// ask joins (POST) or polls (GET, with the token) for poller i.
func (p *pollers) ask(ctx context.Context, i int, method, token string) (pollerStatus, bool) {
	req, err := http.NewRequestWithContext(ctx, method, p.base+"/v1/events/"+p.sale.EventID+"/queue", nil)
	if err != nil {
		return pollerStatus{}, false
	}
	req.Header.Set("Authorization", "Bearer "+p.sessions[i].Token)
	if token != "" {
		req.Header.Set("Queue-Token", token)
	}
	start := time.Now()
	resp, err := p.clients[i%len(p.clients)].Do(req)
	if err != nil {
		if ctx.Err() == nil {
			p.count("no answer", 0)
		}
		return pollerStatus{}, false
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	if method == http.MethodGet {
		p.count(strconv.Itoa(resp.StatusCode), time.Since(start))
	} else {
		p.count(strconv.Itoa(resp.StatusCode), 0)
	}
	var st pollerStatus
	switch {
	case err != nil:
		return st, false
	case resp.StatusCode == http.StatusNotFound:
		st.gone = true
		return st, true
	case resp.StatusCode != http.StatusOK:
		return st, false
	}
	return st, json.Unmarshal(raw, &st) == nil
}

func (p *pollers) count(status string, latency time.Duration) {
	if latency > 0 {
		p.latency.add(latency)
	}
	p.mu.Lock()
	p.byStatus[status]++
	p.mu.Unlock()
}

func (p *pollers) end(how string) {
	p.mu.Lock()
	p.ended[how]++
	p.mu.Unlock()
}

func (p *pollers) stats() PollerStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return PollerStats{Pollers: len(p.sessions), Joins: p.joins.Load(), Polls: p.polls.Load(),
		ByStatus: maps.Clone(p.byStatus), Ended: maps.Clone(p.ended),
		P50MS: p.latency.percentileMS(50), P99MS: p.latency.percentileMS(99)}
}

// latencyHistogram counts latencies in buckets 5 % apart from 50 µs to
// about 60 s, without a lock: a percentile is read off it to within 5 %.
type latencyHistogram struct {
	buckets [histBuckets]atomic.Int64
}

const (
	histBuckets = 300
	histMin     = 50 * time.Microsecond
	histGrowth  = 1.05
)

func (h *latencyHistogram) add(d time.Duration) {
	i := 0
	if d > histMin {
		i = min(histBuckets-1, int(math.Log(float64(d)/float64(histMin))/math.Log(histGrowth))+1)
	}
	h.buckets[i].Add(1)
}

// percentileMS is the upper edge of the bucket holding the q-th percentile.
func (h *latencyHistogram) percentileMS(q float64) float64 {
	var total int64
	for i := range h.buckets {
		total += h.buckets[i].Load()
	}
	if total == 0 {
		return 0
	}
	want := int64(math.Ceil(float64(total) * q / 100))
	var seen int64
	for i := range h.buckets {
		if seen += h.buckets[i].Load(); seen >= want {
			edge := float64(histMin) * math.Pow(histGrowth, float64(i))
			return math.Round(edge/float64(time.Millisecond)*100) / 100
		}
	}
	return 0
}
