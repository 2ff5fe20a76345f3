// Package console is the operations console the supervisor serves under /ui/ (docs/console.md):
// a page of plain HTML, CSS and JavaScript modules embedded in the binary, built only on the
// supervisor's public REST API (the same routes and key a script uses), so it adds no endpoint
// that carries data. The page itself holds none: it asks for the API key when a data route
// answers 401, keeps it in the tab's sessionStorage and sends it as Authorization: Bearer.
//
// Files: console.go (the embedded assets and the handler that serves them with a strict
// Content-Security-Policy and the other browser security headers), assets/ (index.html,
// console.css, favicon.svg and js/: main.js the router and key prompt, api.js the REST client,
// poll.js the shared /stats poll and the client-side rate history, sse.js the event-stream reader
// for the tap and logs routes, overview.js and connector.js the two pages, tap.js and logs.js
// their live panes, diff.js the side-by-side config diff, dialog.js the confirmation dialog,
// dom.js and format.js small helpers: elements, numbers with units, relative times).
//
// The tests (console_test.go) drive a real headless Chromium (pkg/testkit/browser) against a real
// supervisor, its runners and the dev broker.
package console
