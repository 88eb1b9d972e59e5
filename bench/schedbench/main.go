package main

import (
	"fmt"
	"os"
)

func main() {
	for _, p := range os.Args[1:] {
		runs, err := interleaving(p)
		if err != nil {
			fmt.Println(err)
		}
		runs = normalize(runs)
		fmt.Println(len(runs), sequence(runs))
	}
}
