// Package e2e holds the browser tests of Stagedoor's front end (web/static):
// each test starts a whole Stagedoor in-process (app.New on real PostgreSQL
// and Redis, as the HTTP tests do, with a Payrail stub), drives headless
// Chromium through it with chromedp as a person would, looks at what the page
// shows, checks each page with axe-core, and saves a screenshot of each page
// in a temporary folder whose path it logs.
//
// They need Chromium (/usr/bin/chromium), the npm packages of the repository's
// package.json (npm ci: axe-core), and the services of internal/testenv.
// scripts/ensure-browser.sh installs the first two; make test runs it.
//
// The package has only tests.
package e2e
