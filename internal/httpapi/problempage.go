package httpapi

import (
	"bytes"
	"html/template"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
)

// pageRoutes are the routes a browser navigates to: a refusal of one is a
// page in words, not a JSON document the buyer would be shown as it is.
var pageRoutes = map[string]bool{"/": true, "/door": true}

// wantsPage tells whether a refusal answers a browser's navigation to one of
// the pages (a script's fetch gets the problem as JSON, as every client does).
func wantsPage(c echo.Context) bool {
	if !pageRoutes[c.Path()] {
		return false
	}
	r := c.Request()
	if mode := r.Header.Get("Sec-Fetch-Mode"); mode != "" {
		return mode == "navigate"
	}
	accept := r.Header.Get("Accept")
	return len(accept) >= 9 && accept[:9] == "text/html"
}

// refusalPage is a refusal of a page, for a person: what happened and that
// the page tries again by itself (a refresh after Retry-After).
var refusalPage = template.Must(template.New("refusal").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
{{if .Seconds}}<meta http-equiv="refresh" content="{{.Seconds}}">{{end}}
<title>{{.Heading}} · Stagedoor</title>
</head>
<body>
<main>
<h1>{{.Heading}}</h1>
<p>{{.Text}}</p>
{{if .Seconds}}<p>This page tries again by itself in {{.Seconds}} seconds; you don't need to do anything.</p>{{end}}
<p><a href="">Try again now</a></p>
</main>
</body>
</html>
`))

// writeProblemPage writes p as refusalPage, with its Retry-After.
func writeProblemPage(c echo.Context, p *Problem) {
	page := struct {
		Heading, Text string
		Seconds       int64
	}{"Something went wrong on our side", "We couldn't show this page just now.", 0}
	switch {
	case p.Status == http.StatusTooManyRequests:
		page.Heading, page.Text = "Too many tries in a short time", "This browser asked for pages faster than we allow."
	case p.Slug == "service-overloaded":
		page.Heading, page.Text = "We're very busy right now", "Lots of people are here at once, so we're letting them in a few at a time."
	case p.Status == http.StatusServiceUnavailable:
		page.Heading, page.Text = "We're having trouble right now", "Part of Stagedoor isn't answering; it usually comes back within a minute."
	}
	if p.RetryAfter > 0 {
		page.Seconds = retryAfterSeconds(p.RetryAfter)
		c.Response().Header().Set("Retry-After", strconv.FormatInt(page.Seconds, 10))
	}
	var body bytes.Buffer
	_ = refusalPage.Execute(&body, page)
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(p.Status)
		return
	}
	c.Response().WriteHeader(p.Status)
	_, _ = c.Response().Write(body.Bytes())
}
