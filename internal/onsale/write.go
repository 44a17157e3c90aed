package onsale

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// write writes the report to dir: report.json, report.html, every request in
// requests.csv and every buyer in buyers.csv.
func (res *Result) write(dir string, rec *recorder, buyers []*buyerState) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("onsale: the report's directory: %w", err)
	}
	res.JSONPath = filepath.Join(dir, "report.json")
	res.HTMLPath = filepath.Join(dir, "report.html")
	res.RequestsPath = filepath.Join(dir, "requests.csv")
	res.BuyersPath = filepath.Join(dir, "buyers.csv")
	for path, write := range map[string]func(io.Writer) error{
		res.JSONPath: func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(res.Report)
		},
		res.HTMLPath:     res.Report.WriteHTML,
		res.RequestsPath: func(w io.Writer) error { return writeRequests(w, rec, res.Sale) },
		res.BuyersPath:   func(w io.Writer) error { return writeBuyers(w, buyers, res.Sale) },
	} {
		if err := writeFile(path, write); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("onsale: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<16)
	err = write(w)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("onsale: write %s: %w", path, err)
	}
	return nil
}

// writeRequests writes every request as a CSV line: when it was sent (ms
// after on_sale_at), the client (buyers from 0, then the bots; -1 the
// organizer), route, status (0: no answer), latency in ms, the instance, the
// problem's type, what refused it (a limit, a shedder, "edge", or the
// problem's type of a documented 503; empty when it was no refusal) and the
// limit its RateLimit-Policy header named.
func writeRequests(w io.Writer, rec *recorder, sale Sale) error {
	requests, names, _ := rec.snapshot()
	offset := rec.epoch.Sub(sale.OnSaleAt)
	if _, err := io.WriteString(w, "t_ms,client,route,status,latency_ms,instance,problem,refused_by,policy\n"); err != nil {
		return err
	}
	var line []byte
	for _, r := range requests {
		line = line[:0]
		line = strconv.AppendFloat(line, float64(r.start+offset)/1e6, 'f', 1, 64)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(r.client), 10)
		line = append(line, ',')
		line = append(line, names[r.route]...)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(r.status), 10)
		line = append(line, ',')
		line = strconv.AppendFloat(line, float64(r.latency)/1e6, 'f', 2, 64)
		for _, s := range []uint16{r.instance, r.problem, r.refused, r.policy} {
			line = append(line, ',')
			line = append(line, names[s]...)
		}
		line = append(line, '\n')
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	return nil
}

// writeBuyers writes every buyer as a CSV line: her number (from 0, as the
// client of requests.csv), when she arrived, sent her first successful join
// and had its answer, and was admitted (on the room's clock), all in ms after
// on_sale_at (empty: never); whether she had to join again; how her visit
// ended; and the seats she bought.
func writeBuyers(w io.Writer, buyers []*buyerState, sale Sale) error {
	if _, err := io.WriteString(w, "buyer,arrive_ms,join_sent_ms,join_done_ms,admitted_ms,rejoined,outcome,seats\n"); err != nil {
		return err
	}
	ms := func(line []byte, t time.Time) []byte {
		if t.IsZero() {
			return line
		}
		return strconv.AppendFloat(line, float64(t.Sub(sale.OnSaleAt))/1e6, 'f', 1, 64)
	}
	var line []byte
	for i, b := range buyers {
		line = strconv.AppendInt(line[:0], int64(i), 10)
		for _, t := range []time.Time{b.arrive, b.joinSent, b.joinDone, b.admittedAt} {
			line = ms(append(line, ','), t)
		}
		line = strconv.AppendBool(append(line, ','), b.rejoined)
		line = append(append(line, ','), b.outcome...)
		line = strconv.AppendInt(append(line, ','), int64(len(b.seats)), 10)
		line = append(line, '\n')
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	return nil
}
