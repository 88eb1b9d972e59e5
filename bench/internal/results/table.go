package results

import (
	"fmt"
	"io"
	"strings"
)

// TextTable writes rows as aligned columns two spaces apart, for a
// benchmark's summary on stdout: the first column left-aligned (names),
// the others right-aligned (numbers), and the last left-aligned too when
// lastLeft is set (words).
func TextTable(w io.Writer, rows [][]string, lastLeft bool) {
	var width []int
	for _, row := range rows {
		for i, c := range row {
			if i == len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], len(c))
		}
	}
	for _, row := range rows {
		var b strings.Builder
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-len(c))
			switch {
			case i == 0:
				b.WriteString(c + pad)
			case lastLeft && i == len(row)-1:
				b.WriteString("  " + c)
			default:
				b.WriteString("  " + pad + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}
