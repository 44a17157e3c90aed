// Package deploy holds what runs Stagedoor beside its code, and the tests that
// check it:
//
//	prometheus/alerts.yml       the alert rules (promtool check rules), with
//	prometheus/alerts_test.yml  their unit tests (promtool test rules)
//	alertmanager/alertmanager.yml  where what fires goes (amtool check-config,
//	                            and a firing alert sent through Prometheus)
//	grafana/stagedoor.json      a Grafana dashboard
//	compose/                    HAProxy's, PgBouncer's and Prometheus's
//	                            configuration for docker compose --profile
//	                            scale, rendered from the templates of
//	                            scripts/cluster (go generate), and PgBouncer's
//	                            userlist.txt
//
// The tests need promtool (Debian's prometheus), amtool and
// prometheus-alertmanager (Debian's prometheus-alertmanager) and haproxy on PATH, and fail
// saying so when one is missing: scripts/ensure-ops.sh installs them, and
// make test runs it. docs/operations.md describes the alerts and the local
// cluster (make cluster) that uses all of this.
package deploy

//go:generate go run ../scripts/cluster/render -template ../scripts/cluster/haproxy.cfg.tmpl -data compose/haproxy.json -out compose/haproxy.cfg
//go:generate go run ../scripts/cluster/render -template ../scripts/cluster/prometheus.yml.tmpl -data compose/prometheus.json -out compose/prometheus.yml
//go:generate go run ../scripts/cluster/render -template ../scripts/cluster/pgbouncer.ini.tmpl -data compose/pgbouncer.json -out compose/pgbouncer.ini
