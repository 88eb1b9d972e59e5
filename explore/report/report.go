// Package report writes the explorer as one self-contained HTML file
// (`analyze report`): the web application of package explore/web with its
// script, styles and graph-layout library inlined, and the view models of
// package explore precomputed for the moments that matter, put in the page
// as JSON that the application reads instead of asking a server.
//
// The models are gathered through the explorer's HTTP API (Collect calls
// the handler in process), so a report shows exactly what `analyze serve`
// would show at the same moments.
package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/mgtrace/mgtrace/explore"
	"github.com/mgtrace/mgtrace/explore/web"
)

// Data is what a report page holds: the answers of the HTTP API that the
// web application asks for, keyed as it asks (graphs by timestamp, sources
// by path, node histories by id).
type Data struct {
	Run      explore.Run                    `json:"run"`
	Timeline explore.Timeline               `json:"timeline"`
	Findings explore.Findings               `json:"findings"`
	Files    explore.Files                  `json:"files"`
	Graphs   map[string]explore.GraphView   `json:"graphs"`
	Sources  map[string]explore.Source      `json:"sources"`
	Nodes    map[string]explore.NodeHistory `json:"nodes"`
	// Notes say what the report left out (graphs collapsed, moments or
	// files over the caps), one line each; the page shows them.
	Notes []string `json:"notes,omitempty"`
}

// HasFindings reports whether the data shows something found: a
// violation, a located fault, a bug finding or a crash.
func (d *Data) HasFindings() bool {
	f := &d.Findings
	return len(f.Violations) > 0 || len(f.Faults) > 0 || len(f.Bugs) > 0 || f.Crash != nil
}

// dataTag is the element the application reads its embedded models from
// (app.js, "mgtrace-data").
const dataTag = `<script id="mgtrace-data" type="application/json">`

// Write writes the report page for d to w: index.html with style.css,
// the graph-layout library and app.js inlined, and d as JSON before the
// application's script.
func Write(w io.Writer, d *Data) error {
	assets := web.Assets()
	page, err := fs.ReadFile(assets, "index.html")
	if err != nil {
		return fmt.Errorf("report: read the page: %w", err)
	}
	read := func(name string) (string, error) {
		b, err := fs.ReadFile(assets, name)
		if err != nil {
			return "", fmt.Errorf("report: read %s: %w", name, err)
		}
		return string(b), nil
	}
	css, err := read("style.css")
	if err != nil {
		return err
	}
	dagre, err := read("vendor/dagre.min.js")
	if err != nil {
		return err
	}
	app, err := read("app.js")
	if err != nil {
		return err
	}
	// encoding/json escapes <, > and & in strings, so the data cannot
	// close its script element.
	data, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("report: encode the models: %w", err)
	}
	html := string(page)
	for _, r := range []struct{ old, new string }{
		{`<link rel="stylesheet" href="static/style.css">`, "<style>\n" + css + "\n</style>"},
		{`<script src="static/vendor/dagre.min.js"></script>`, "<script>\n" + scriptSafe(dagre) + "\n</script>"},
		{`<script src="static/app.js"></script>`, dataTag + string(data) + "</script>\n<script>\n" + scriptSafe(app) + "\n</script>"},
	} {
		if !strings.Contains(html, r.old) {
			return fmt.Errorf("report: the page has no %s to inline", r.old)
		}
		html = strings.Replace(html, r.old, r.new, 1)
	}
	var buf bytes.Buffer
	buf.WriteString(html)
	if _, err := buf.WriteTo(w); err != nil {
		return fmt.Errorf("report: write: %w", err)
	}
	return nil
}

// scriptSafe keeps inlined script text from closing its element early.
func scriptSafe(js string) string {
	return strings.ReplaceAll(js, "</script", `<\/script`)
}
