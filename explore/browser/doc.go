// Package browser holds the explorer's browser tests: a real headless
// Chromium, driven over the Chrome DevTools Protocol by
// github.com/chromedp/chromedp, opens `analyze serve`'s handler and
// `analyze report`'s file on recorded demo traces and checks what a person
// sees (the moment, the highlighted line, the marked nodes, the graph's
// node and edge counts against `analyze mg --format json`), saving
// screenshots. The package has no code of its own: its tests are apart so
// that the other packages' tests do not pay for a browser.
//
// Chromium is Debian's package (/usr/bin/chromium; MGTRACE_CHROMIUM names
// another). Without it the tests skip, except under CI=true, where they
// fail. MGTRACE_SCREENSHOTS names a folder to keep the screenshots in.
package browser
