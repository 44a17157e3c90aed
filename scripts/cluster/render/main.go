// Command render fills one of the cluster's configuration templates
// (scripts/cluster/*.tmpl, Go text/template syntax) with JSON data and writes
// the result: scripts/cluster/up.sh renders HAProxy's and Prometheus's
// configuration with it, go generate ./deploy renders the docker compose copies
// (deploy/compose), and the tests in deploy/ render both and check them with
// haproxy -c and promtool.
//
//	go run ./scripts/cluster/render -template T [-data FILE] [-out FILE]
//
// The data is a JSON object (from FILE, or from stdin when FILE is "-" or not
// given). Every key a template uses must be present (missingkey=error), so a
// misspelt key fails instead of rendering as "<no value>". The output is
// written to FILE through a temporary file and a rename (stdout when not given).
// It uses the standard library only, so that it builds without the module's
// dependencies.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/template"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "render:", err)
		os.Exit(1)
	}
}

func run(args []string, stdin io.Reader, stdout io.Writer) error {
	flags := flag.NewFlagSet("render", flag.ContinueOnError)
	tmplPath := flags.String("template", "", "the template (Go text/template syntax)")
	dataPath := flags.String("data", "-", `the JSON data ("-": stdin)`)
	outPath := flags.String("out", "", "write here (default: stdout)")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *tmplPath == "" || flags.NArg() > 0 {
		return fmt.Errorf("usage: render -template FILE [-data FILE|-] [-out FILE]")
	}
	text, err := os.ReadFile(*tmplPath)
	if err != nil {
		return err
	}
	var raw []byte
	if *dataPath == "-" {
		raw, err = io.ReadAll(stdin)
	} else {
		raw, err = os.ReadFile(*dataPath)
	}
	if err != nil {
		return err
	}
	var data map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // 5 stays 5, not 5e+00
	if err := dec.Decode(&data); err != nil {
		return fmt.Errorf("the data is not a JSON object: %w", err)
	}
	tmpl, err := template.New(filepath.Base(*tmplPath)).Option("missingkey=error").Parse(string(text))
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, data); err != nil {
		return err
	}
	if *outPath == "" {
		_, err := stdout.Write(out.Bytes())
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(*outPath), ".render-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(out.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), *outPath)
}
