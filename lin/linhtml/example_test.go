package linhtml_test

import (
	"context"
	"log"
	"os"

	"github.com/mgtrace/mgtrace/lin"
	"github.com/mgtrace/mgtrace/lin/linhtml"
	"github.com/mgtrace/mgtrace/lin/models"
)

// Check a history (figure3, in linhtml_test.go, builds the pair-snapshot
// history of Chen, Zhang, Wu and Zhang's figure 3) and write the page to a
// file that any browser opens from disk.
func ExampleWrite() {
	h := figure3()
	m, err := models.New("snapshot", lin.ListValue(lin.IntValue(1), lin.IntValue(1)))
	if err != nil {
		log.Fatal(err)
	}
	res, err := lin.Check(context.Background(), m, h, lin.Options{})
	if err != nil {
		log.Fatal(err)
	}
	f, err := os.CreateTemp("", "figure3-*.html")
	if err != nil {
		log.Fatal(err)
	}
	defer os.Remove(f.Name())
	if err := linhtml.Write(f, m, h, res, linhtml.Options{WholeHistory: true}); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}
