// yaml-referee prints how Kubernetes reads a YAML stream: the stream is cut into documents the
// way client-go's YAML reader cuts it (at lines starting with "---" followed by nothing but
// blanks or a comment), and each document is converted with sigs.k8s.io/yaml's YAMLToJSON, the
// conversion kubectl, the API server's YAML decoding and Argo CD use.
//
// Usage: yaml-referee [FILE]   (standard input when no file is given)
//
// Output: one JSON line per document, in order:
//
//	{"line":N,"json":VALUE}     the document, as Kubernetes sees it (null for an empty one)
//	{"line":N,"error":"..."}    YAMLToJSON refused the document
//
// N is the 1-based line where the document's text starts. syncguard's conformance test
// (tests/yaml_conformance.rs) compares these values with its own loader's.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"sigs.k8s.io/yaml"
)

type document struct {
	line int
	text []byte
}

// split cuts a stream as client-go's YAMLReader does: a line that starts with "---" and has
// nothing after it but blanks or a comment ends the current document and is itself dropped;
// documents with no bytes at all are skipped.
func split(stream []byte) []document {
	var docs []document
	var current bytes.Buffer
	start := 1
	lineNo := 0
	for len(stream) > 0 {
		lineNo++
		end := bytes.IndexByte(stream, '\n')
		var line []byte
		if end < 0 {
			line, stream = stream, nil
		} else {
			line, stream = stream[:end+1], stream[end+1:]
		}
		if bytes.HasPrefix(line, []byte("---")) {
			rest := bytes.TrimSpace(line[3:])
			if len(rest) == 0 || rest[0] == '#' {
				if current.Len() > 0 {
					docs = append(docs, document{start, append([]byte(nil), current.Bytes()...)})
				}
				current.Reset()
				start = lineNo + 1
				continue
			}
		}
		current.Write(line)
	}
	if current.Len() > 0 {
		docs = append(docs, document{start, current.Bytes()})
	}
	return docs
}

type result struct {
	Line  int              `json:"line"`
	JSON  *json.RawMessage `json:"json,omitempty"`
	Error string           `json:"error,omitempty"`
}

func main() {
	var in io.Reader = os.Stdin
	if len(os.Args) > 2 {
		fmt.Fprintln(os.Stderr, "usage: yaml-referee [FILE]")
		os.Exit(2)
	}
	if len(os.Args) == 2 {
		f, err := os.Open(os.Args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		defer f.Close()
		in = f
	}
	stream, err := io.ReadAll(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for _, doc := range split(stream) {
		r := result{Line: doc.line}
		converted, err := yaml.YAMLToJSON(doc.text)
		if err != nil {
			r.Error = err.Error()
		} else {
			raw := json.RawMessage(converted)
			r.JSON = &raw
		}
		if err := enc.Encode(r); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
