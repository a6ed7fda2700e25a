// Command gen makes the world map's country shapes from world-atlas's
// countries TopoJSON (Natural Earth's boundaries, keyed by ISO 3166-1
// numeric code) and i18n-iso-countries' table of codes: each country
// projected (Natural Earth), fitted to a picture 1,000 units wide,
// simplified, rounded to whole units and written as SVG path data under
// its alpha-2 code, the code tally's statistics use.
// scripts/vendor-worldmap.sh downloads both packages and runs it:
//
//	go run ./internal/web/worldmap/gen -topology countries-110m.json \
//		-codes codes.json -source "…" -out internal/web/worldmap/data/countries.txt
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	topologyPath := flag.String("topology", "", "world-atlas countries TopoJSON (countries-110m.json)")
	codesPath := flag.String("codes", "", "i18n-iso-countries codes.json")
	out := flag.String("out", "", "the file to write")
	source := flag.String("source", "", "where the inputs come from, for the file's header")
	flag.Parse()
	if *topologyPath == "" || *codesPath == "" || *out == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*topologyPath, *codesPath, *out, *source); err != nil {
		fmt.Fprintln(os.Stderr, "worldmap gen:", err)
		os.Exit(1)
	}
}

func run(topologyPath, codesPath, out, source string) error {
	var t topology
	if err := readJSON(topologyPath, &t); err != nil {
		return err
	}
	var codes [][]string
	if err := readJSON(codesPath, &codes); err != nil {
		return err
	}
	m, dropped, err := convert(t, alpha2ByNumeric(codes), defaults)
	if err != nil {
		return err
	}
	if len(dropped) > 0 {
		fmt.Fprintf(os.Stderr, "worldmap gen: too small to draw: %s\n", strings.Join(dropped, ", "))
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	write(w, m, source)
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// alpha2ByNumeric reads i18n-iso-countries' codes.json (rows of alpha-2,
// alpha-3, numeric, …) as numeric → alpha-2.
func alpha2ByNumeric(rows [][]string) map[string]string {
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		if len(r) >= 3 {
			out[r[2]] = r[0]
		}
	}
	return out
}

// write writes the map as the package worldmap reads it: a header of
// comments, the picture's size, then a country a line, its code and its
// path data.
func write(w io.Writer, m worldMap, source string) {
	fmt.Fprintln(w, "# The world map's countries: an ISO 3166-1 alpha-2 code and SVG path data a line,")
	fmt.Fprintln(w, "# in a picture of the size below. Made by internal/web/worldmap/gen (scripts/vendor-worldmap.sh)")
	if source != "" {
		fmt.Fprintln(w, "# from "+source+".")
	}
	fmt.Fprintln(w, "# Do not edit: run the script again.")
	fmt.Fprintf(w, "size %g %g\n", m.Width, m.Height)
	for _, c := range m.Countries {
		fmt.Fprintf(w, "%s %s\n", c.Code, pathData(c.Rings))
	}
}
