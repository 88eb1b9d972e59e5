package linhtml

import (
	"fmt"
	"html/template"
	"strings"
)

// pageTemplate parses the page's template. It is parsed for each page
// rather than kept in a package variable: the package holds no state.
//
// The markup is also well-formed XML (every element closed, void elements
// written <meta ... />, attribute values quoted), so that a test can check
// it with encoding/xml. No element other than a void one or an SVG one is
// self-closed: HTML would read <div/> as an opening tag.
func pageTemplate() (*template.Template, error) {
	return template.New("page").Funcs(template.FuncMap{
		"css":     func(s string) template.CSS { return template.CSS(s) },
		"inc":     func(i int) int { return i + 1 },
		"clientX": func() int { return labelW - 10 },
		"markerR": func() int { return markerR },
	}).Parse(pageHTML)
}

const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8" />
<meta name="viewport" content="width=device-width, initial-scale=1" />
<meta name="generator" content="mgtrace lin/linhtml" />
<title>{{.Title}}</title>
<style>
{{css .CSS}}
</style>
</head>
<body>
<svg class="defs" width="0" height="0" aria-hidden="true"><defs>
<pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#dce6f4" /><rect width="2.5" height="6" fill="#7f9dc8" /></pattern>
<linearGradient id="fade" x1="0" y1="0" x2="1" y2="0"><stop offset="0" stop-color="#a9c4ea" /><stop offset="0.55" stop-color="#a9c4ea" stop-opacity="0.6" /><stop offset="1" stop-color="#a9c4ea" stop-opacity="0" /></linearGradient>
<linearGradient id="fadewhite" x1="0" y1="0" x2="1" y2="0"><stop offset="0" stop-color="#fff" /><stop offset="0.55" stop-color="#fff" /><stop offset="1" stop-color="#fff" stop-opacity="0" /></linearGradient>
<linearGradient id="fadeline" x1="0" y1="0" x2="1" y2="0"><stop offset="0" stop-color="#1f4e8c" /><stop offset="1" stop-color="#1f4e8c" stop-opacity="0" /></linearGradient>
</defs></svg>
<header>
<h1 class="{{.Class}}">{{.Heading}}</h1>
<dl class="facts">
{{- range .Facts}}
<dt>{{.Label}}</dt><dd>{{.Value}}</dd>
{{- end}}
</dl>
{{- with .Failing}}
<div class="failing"><strong>Could not be placed:</strong> <code>{{.Desc}}</code> <span class="src">({{.Where}}; {{.Source}})</span><br />No order of the operations, consistent with their real-time order, lets the model give this response: it is the earliest response after which the history is not linearizable.</div>
{{- end}}
</header>
{{- range .Notes}}
<p class="explain">{{.}}</p>
{{- end}}
{{- with .CX}}
<section class="cx">
<h2>Counterexample</h2>
<p class="explain">Each bar is an operation, from its call (left end) to its response (right end), one row per client. Positions are spaced evenly by rank, not to scale; the numbers on top are the positions. The operation outlined in red <em>could not be placed</em>: the red band is its interval, and the operations outlined in dashed amber overlap it. An operation that had not returned at the cut is <em>pending (never returned)</em> and runs to the right edge, fading: it may or may not have taken effect; hatched ones are info (outcome unknown). A label too long for its bar is written after it or shortened with an ellipsis. Hover over a bar for its full description, positions and source.</p>
{{- if $.Partials}}
<p class="explain">The checker kept the longest partial linearizations: orders of some of the operations that the model accepts, after which the response of the operation marked ✕ cannot be explained. Choose one: its <em>linearization points</em> are numbered just below the bars, in the order the model ran the operations (hover over one for the state after it), and the operations it leaves out are greyed.</p>
{{- range $.Partials}}
<input type="radio" name="linearization" class="sel" id="lp-{{.Index}}"{{if eq .Index 0}} checked="checked"{{end}} />
{{- end}}
<div class="tabs">
{{- range $.Partials}}
<label for="lp-{{.Index}}">{{.Tab}}</label>
{{- end}}
</div>
{{- end}}
{{- with .Note}}
<p class="note">{{.}}</p>
{{- end}}
<div class="body">
<div class="tlwrap">
{{template "timeline" .}}
</div>
{{- if $.Partials}}
<div class="lists">
{{- range $.Partials}}
<div class="lp lp-{{.Index}}">
<h3>Linearization {{inc .Index}}</h3>
<p>Initial state <code>{{.Init}}</code></p>
<ol class="steps">
{{- range .Steps}}
<li><code>{{.Desc}}</code> → state <code>{{.State}}</code></li>
{{- end}}
</ol>
{{- with .Blocked}}
<p class="blocked">✕ Then <code>{{.}}</code> could not be placed: every way of placing it next failed.</p>
{{- end}}
{{- if .Unplaced}}
<p class="unplaced">Not in this order:{{range $i, $d := .Unplaced}}{{if $i}},{{end}} <code>{{$d}}</code>{{end}}.</p>
{{- end}}
</div>
{{- end}}
</div>
{{- end}}
</div>
{{template "legend"}}
</section>
{{- end}}
{{- with .Whole}}
<section class="whole">
<h2>The history up to the cut</h2>
<p class="explain">{{.Caption}}</p>
{{- with .Note}}
<p class="note">{{.}}</p>
{{- end}}
<div class="tlwrap">
{{template "timeline" .}}
</div>
</section>
{{- end}}
<footer>Written by mgtrace's lin/linhtml. The page is self-contained: it loads nothing.</footer>
</body>
</html>
{{define "timeline"}}<svg class="tl" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" role="img" aria-label="timeline of the operations">
{{- range .Rows}}
<rect class="row{{if .Alt}} alt{{end}}" x="0" y="{{.Y}}" width="100%" height="{{.H}}" /><text class="client" x="{{clientX}}" y="{{.TextY}}">{{.Label}}</text>
{{- end}}
{{- range .Ticks}}
<line class="tick" x1="{{.X}}" y1="{{.Y1}}" x2="{{.X}}" y2="{{.Y2}}" /><text class="tickl" x="{{.X}}" y="{{.TextY}}">{{.Label}}</text>
{{- end}}
{{- with .Band}}
<rect class="band" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" />
{{- end}}
{{- with .Cut}}
<line class="cut" x1="{{.X}}" y1="{{.Y1}}" x2="{{.X}}" y2="{{.Y2}}" /><text class="cutl" x="{{.X}}" y="{{.TextY}}">{{.Label}}</text>
{{- end}}
{{- range .Overlays}}
{{- if .Points}}
<polyline class="lp lp-{{.Index}} path" points="{{.Points}}" />
{{- end}}
{{- end}}
{{- range .Bars}}
{{- if .Under}}
<rect class="{{.Under}}" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" rx="3" />
{{- end}}
<g class="{{.Class}}"><title>{{.Title}}</title><rect class="bar" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" rx="3" />
{{- if .Text}}<text class="lbl{{if .Out}} out{{end}}" x="{{.TextX}}" y="{{.TextY}}">{{.Text}}</text>{{end}}
{{- if .Fail}}<text class="tag" x="{{.TagX}}" y="{{.TagY}}">could not be placed</text>{{end}}</g>
{{- end}}
{{- range .Overlays}}
<g class="lp lp-{{.Index}}">
{{- range .Markers}}
<g class="mk"><title>{{.Title}}</title><circle cx="{{.X}}" cy="{{.Y}}" r="{{markerR}}" /><text x="{{.X}}" y="{{.TextY}}">{{.Label}}</text></g>
{{- end}}
{{- with .Blocked}}
<g class="mk blk"><title>{{.Title}}</title><circle cx="{{.X}}" cy="{{.Y}}" r="{{markerR}}" /><text x="{{.X}}" y="{{.TextY}}">{{.Label}}</text></g>
{{- end}}
</g>
{{- end}}
</svg>{{end}}
{{define "legend"}}<div class="legend">
<span><svg width="36" height="16"><g class="op st-ok"><rect class="bar" x="2" y="2" width="32" height="12" rx="3" /></g></svg> completed</span>
<span><svg width="36" height="16"><g class="op st-pending"><rect class="bar" x="2" y="2" width="32" height="12" rx="3" /></g></svg> pending (never returned, or still running at the cut)</span>
<span><svg width="36" height="16"><g class="op st-info"><rect class="bar" x="2" y="2" width="32" height="12" rx="3" /></g></svg> info (outcome unknown)</span>
<span><svg width="36" height="16"><g class="op st-ok fail"><rect class="bar" x="2" y="2" width="32" height="12" rx="3" /></g></svg> could not be placed</span>
<span><svg width="36" height="16"><g class="op st-ok ovl"><rect class="bar" x="2" y="2" width="32" height="12" rx="3" /></g></svg> overlaps it</span>
<span><svg width="22" height="22"><g class="mk"><circle cx="11" cy="11" r="{{markerR}}" /><text x="11" y="15">1</text></g></svg> linearization point</span>
<span><svg width="22" height="22"><g class="mk blk"><circle cx="11" cy="11" r="{{markerR}}" /><text x="11" y="15">✕</text></g></svg> could not be placed next</span>
</div>{{end}}`

// baseCSS styles every page. It holds no "<" or "&", so that the page
// stays well-formed XML.
const baseCSS = `*{box-sizing:border-box}
svg.defs{position:absolute}
body{margin:0;padding:20px 28px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:#1d232b;background:#fff}
code,.tl text{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono","Liberation Mono",monospace}
code{font-size:13px}
h1{font-size:24px;margin:0 0 10px}
h1.bad{color:#b3261e}
h1.good{color:#1b6e3a}
h1.undecided{color:#8a5a00}
h2{font-size:18px;margin:26px 0 8px}
h3{font-size:15px;margin:0 0 6px}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0 0 12px}
dl.facts dt{color:#5b6573}
dl.facts dd{margin:0;overflow-wrap:anywhere}
.failing{border-left:4px solid #c62828;background:#fdf1f0;padding:8px 12px;margin:10px 0;max-width:1000px;overflow-wrap:anywhere}
.failing code{font-weight:bold}
.src{color:#5b6573}
.explain{max-width:1000px}
.note{color:#8a5a00}
.sel{position:absolute;opacity:0;pointer-events:none}
.tabs{display:flex;flex-wrap:wrap;gap:6px;margin:10px 0}
.tabs label{cursor:pointer;border:1px solid #1f4e8c;border-radius:4px;padding:3px 10px;color:#1f4e8c;background:#fff;user-select:none}
.sel:focus-visible~.tabs{outline:2px solid #1f4e8c;outline-offset:3px}
.body{display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start}
.tlwrap{flex:0 1 auto;width:max-content;max-width:100%;overflow-x:auto;border:1px solid #d8dde3;border-radius:4px}
.lists{flex:1 1 320px;max-width:1000px;overflow-wrap:anywhere}
.lp{display:none}
ol.steps{padding-left:28px;margin:6px 0}
.blocked{color:#b3261e}
.unplaced{color:#5b6573}
svg.tl{display:block}
.tl text{font-size:12px}
.row{fill:#fff}
.row.alt{fill:#f5f7f9}
.client{fill:#5b6573;text-anchor:end}
.tick{stroke:#e4e8ed}
.tl .tickl{fill:#7a8490;text-anchor:middle;font-size:10px}
.band{fill:#c62828;fill-opacity:0.08}
.cut{stroke:#c62828;stroke-dasharray:4 3}
.tl .cutl{fill:#c62828;text-anchor:middle;font-size:10px}
.bar{fill:#a9c4ea;stroke:#1f4e8c;stroke-width:1}
.st-unknown .bar{fill:#cbd9ee}
.st-pending .bar{fill:url(#fade);stroke:url(#fadeline)}
.st-info .bar{fill:url(#hatch);stroke:url(#fadeline)}
.lbl{fill:#0f223d}
.lbl.out{paint-order:stroke;stroke:#fff;stroke-width:4px;stroke-linejoin:round}
.under{fill:#fff}
.under.fade{fill:url(#fadewhite)}
.tl .tag{fill:#c62828;font-size:10px;font-weight:bold}
.ovl .bar{stroke:#d97706;stroke-width:2;stroke-dasharray:5 3}
.fail .bar{stroke:#c62828;stroke-width:3;stroke-dasharray:none}
.ctx .bar{fill:#eceef1;stroke:#b9c0c8;stroke-width:1}
.ctx .lbl{fill:#8a939e}
.cxop .bar{stroke-width:2}
.path{fill:none;stroke:#0b6e4f;stroke-width:1.5;stroke-dasharray:3 3}
.mk circle{fill:#fff;stroke:#0b6e4f;stroke-width:2}
.mk text{fill:#0b6e4f;text-anchor:middle;font-size:11px;font-weight:bold}
.mk.blk circle{fill:#c62828;stroke:#c62828}
.mk.blk text{fill:#fff}
.legend{display:flex;flex-wrap:wrap;gap:6px 18px;margin:10px 0;color:#333;font-size:13px}
.legend span{display:inline-flex;align-items:center;gap:6px}
.legend svg{display:block}
footer{margin-top:28px;color:#8a939e;font-size:12px}
`

// partialCSS shows the chosen partial linearization: its tab, its path,
// markers and list, and greys the operations it leaves out. Greying
// fades their paint rather than the whole bar, so that the white below
// a bar and around a label written after it still hide the path.
func partialCSS(n int) string {
	var b strings.Builder
	for k := 0; k < n; k++ {
		out := fmt.Sprintf("#lp-%d:checked~.body .op:not(.in-%d):not(.blk-%d)", k, k, k)
		fmt.Fprintf(&b, "#lp-%d:checked~.tabs label[for=lp-%d]{background:#1f4e8c;color:#fff}\n", k, k)
		fmt.Fprintf(&b, "#lp-%d:checked~.body .lp-%d{display:block}\n", k, k)
		fmt.Fprintf(&b, "%s .bar{fill-opacity:0.3;stroke-opacity:0.3}\n", out)
		fmt.Fprintf(&b, "%s text{fill-opacity:0.4}\n", out)
	}
	return b.String()
}
