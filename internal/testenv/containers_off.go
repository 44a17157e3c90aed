//go:build !testcontainers

package testenv

import "testing"

// services is what containers started: nothing, in a build without
// testcontainers.
type services struct{ postgresURL, redisURL string }

// containers fails the test: this build has no testcontainers (its
// dependencies are many, and most machines that test run services of their
// own). Build with -tags testcontainers to start PostgreSQL and Redis in Docker;
// scripts/ensure-services.sh --test-env asks for it when a Docker engine answers.
func containers(t testing.TB) services {
	t.Helper()
	t.Fatalf("%s\n(this test binary was built without -tags testcontainers)", help)
	return services{}
}
