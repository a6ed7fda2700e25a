// Package export writes statistics reports as files: one report as CSV (the
// API's format=csv answers) and every report of a range as a zip of CSV
// files (the dashboard's download). Both write their CSV here, so a file of
// the zip is byte for byte the API's answer. It also streams a site's raw
// events (NDJSON, or CSV written the same way) for the API and the command
// line.
package export

import (
	"bufio"
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
)

// ContentType is the media type of a CSV report.
const ContentType = "text/csv; charset=utf-8"

// Table is a report that has a CSV form: CSVRows is a slice of structs (the
// items of one list of its JSON answer) whose json tags name the columns.
// The response types of pkg/api implement it.
type Table interface {
	CSVRows() any
}

// WriteCSV writes rows, a slice of structs, as CSV (RFC 4180, CRLF line
// ends): a header of the items' JSON field names, then a row per item with
// each value as the JSON answer writes it (numbers and booleans in JSON's
// notation, null as an empty cell). A field that is an object becomes
// columns named with dots (parent.child); embedded structs add their fields
// as JSON does. The header comes from the element type, so an empty list is
// a header alone.
//
// A text cell that starts with =, +, -, @, a tab or a carriage return gets a
// leading single quote, so that spreadsheets show it instead of running it
// as a formula; numbers are left alone (-2.5 is a number, not a formula).
func WriteCSV(w io.Writer, rows any) error {
	v := reflect.ValueOf(rows)
	if v.Kind() != reflect.Slice {
		return fmt.Errorf("export: rows are a %s, not a slice", v.Kind())
	}
	cw, err := NewCSVWriter(w, v.Type().Elem())
	if err != nil {
		return err
	}
	for i := range v.Len() {
		if err := cw.write(v.Index(i)); err != nil {
			return err
		}
	}
	return cw.Flush()
}

// CSVWriter writes CSV as WriteCSV does, one row at a time, for lists too
// long to hold (the raw event export).
type CSVWriter struct {
	bw     *bufio.Writer
	cols   []column
	record []string
}

// NewCSVWriter starts CSV of rows of type elem (a struct or a pointer to
// one) on w, buffered: the header row is written first, so that even no
// rows make a file with a header.
func NewCSVWriter(w io.Writer, elem reflect.Type) (*CSVWriter, error) {
	cols, err := columnsOf(elem, "", nil)
	if err != nil {
		return nil, err
	}
	cw := &CSVWriter{bw: bufio.NewWriter(w), cols: cols, record: make([]string, len(cols))}
	for i, c := range cols {
		cw.record[i] = c.name
	}
	writeRecord(cw.bw, cw.record)
	return cw, nil
}

// Write writes one row: item is a value of the writer's row type.
func (cw *CSVWriter) Write(item any) error { return cw.write(reflect.ValueOf(item)) }

func (cw *CSVWriter) write(item reflect.Value) error {
	var err error
	for j, c := range cw.cols {
		if cw.record[j], err = c.cell(item); err != nil {
			return fmt.Errorf("export: column %s: %w", c.name, err)
		}
	}
	writeRecord(cw.bw, cw.record)
	_, err = cw.bw.Write(nil) // the buffer's error, if writing it out failed
	return err
}

// Flush writes what is buffered to the underlying writer.
func (cw *CSVWriter) Flush() error { return cw.bw.Flush() }

// column is a CSV column: its name and the path of struct fields (indexes,
// as reflect.Value.FieldByIndex takes them) to its value in an item.
type column struct {
	name  string
	index []int
}

// columnsOf lists the columns of a struct type, the fields of nested
// structs under prefix.
func columnsOf(t reflect.Type, prefix string, index []int) ([]column, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("export: rows of %s, not of structs", t)
	}
	var cols []column
	for i := range t.NumField() {
		f := t.Field(i)
		// omitempty does not apply: every row has every column
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		// as in JSON: unexported fields are left out, but the fields of an
		// embedded struct of an unexported type are not
		if tag == "-" || (!f.IsExported() && !(f.Anonymous && ft.Kind() == reflect.Struct)) {
			continue
		}
		name := tag
		if name == "" {
			name = f.Name
		}
		at := append(slices.Clone(index), i)
		if ft.Kind() != reflect.Struct || marshals(ft) {
			cols = append(cols, column{name: prefix + name, index: at})
			continue
		}
		inner := prefix + name + "."
		if f.Anonymous && tag == "" { // embedded: its fields are the item's own
			inner = prefix
		}
		nested, err := columnsOf(ft, inner, at)
		if err != nil {
			return nil, err
		}
		cols = append(cols, nested...)
	}
	return cols, nil
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// marshals reports whether t writes itself in JSON (time.Time, api.Number):
// it is one value, not an object to flatten.
func marshals(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(jsonMarshaler) || pt.Implements(jsonMarshaler) ||
		t.Implements(textMarshaler) || pt.Implements(textMarshaler)
}

// cell is the column's value in item, as text.
func (c column) cell(item reflect.Value) (string, error) {
	v := item
	for _, i := range c.index {
		if v = deref(v); !v.IsValid() {
			return "", nil // a nil object on the way: null
		}
		v = v.Field(i)
	}
	if v = deref(v); !v.IsValid() {
		return "", nil
	}
	if v.Kind() == reflect.String && !marshals(v.Type()) {
		return Neutralise(v.String()), nil
	}
	b, err := marshal(v.Interface())
	switch {
	case err != nil:
		return "", err
	case string(b) == "null":
		return "", nil
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return "", err
		}
		return Neutralise(s), nil
	}
	return string(b), nil
}

// marshal is json.Marshal without the escapes of <, > and & for HTML: a
// cell is read in a spreadsheet, not a page.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// deref follows pointers and interfaces; a nil one is the zero Value.
func deref(v reflect.Value) reflect.Value {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return reflect.Value{}
		}
		v = v.Elem()
	}
	return v
}

// Neutralise prefixes a single quote to text a spreadsheet would take for a
// formula: text starting with =, +, -, @, a tab or a carriage return.
func Neutralise(s string) string {
	if s != "" && strings.IndexByte("=+-@\t\r", s[0]) >= 0 {
		return "'" + s
	}
	return s
}

// writeRecord writes one record: fields quoted when they hold a comma, a
// quote or a line break (quotes doubled inside), CRLF at the end. Line
// breaks inside fields are kept as they are.
func writeRecord(w *bufio.Writer, fields []string) {
	for i, f := range fields {
		if i > 0 {
			w.WriteByte(',')
		}
		if !strings.ContainsAny(f, ",\"\r\n") {
			w.WriteString(f)
			continue
		}
		w.WriteByte('"')
		w.WriteString(strings.ReplaceAll(f, `"`, `""`))
		w.WriteByte('"')
	}
	w.WriteString("\r\n")
}
