package httpapi

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/stagedoor/stagedoor/internal/errkind"
)

// checkKeys refuses what encoding/json lets through although the contract
// does not: a member named in another case than the field's ("HOLD_ID" for
// hold_id: encoding/json matches names case-insensitively), and a member that
// appears twice in one object (encoding/json keeps the last). It walks data,
// one JSON value already decoded into a value of type t, and its nested
// objects and arrays by the types of the fields they fill. An error is an
// errkind.Invalid error naming the member by its path (sections[0].name).
func checkKeys(data []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // numbers are not converted, so none can fail here
	return walkKeys(dec, t, "")
}

// walkKeys reads one value from dec and checks the members of every object in
// it. t is the Go type it fills; nil for a value whose members are not fields
// (a map's, or one that decodes itself), of which only duplicates are refused.
func walkKeys(dec *json.Decoder, t reflect.Type, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return jsonProblem(err)
	}
	t = fieldsType(t)
	switch tok {
	case json.Delim('{'):
		fields := fieldsOf(t)
		seen := map[string]bool{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return jsonProblem(err)
			}
			key, _ := tok.(string)
			member := joinPath(path, key)
			if seen[key] {
				return errkind.Invalidf("field %q appears more than once; send each field once", member)
			}
			seen[key] = true
			var inner reflect.Type
			if t != nil {
				switch t.Kind() {
				case reflect.Map:
					inner = t.Elem()
				case reflect.Struct:
					ft, ok := fields[key]
					if !ok {
						return unknownMember(member, key, fields)
					}
					inner = ft
				}
			}
			if err := walkKeys(dec, inner, member); err != nil {
				return err
			}
		}
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := walkKeys(dec, elem, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	default:
		return nil // a string, number, true, false or null
	}
	_, err = dec.Token() // the closing } or ]
	if err != nil {
		return jsonProblem(err)
	}
	return nil
}

// unknownMember is the error of a member no field has by that exact name,
// saying which field it would have filled in another case.
func unknownMember(member, key string, fields map[string]reflect.Type) error {
	for name := range fields {
		if strings.EqualFold(name, key) {
			return errkind.Invalidf("unknown field %q: field names are case-sensitive (did you mean %q?)", member, name)
		}
	}
	return errkind.Invalidf("unknown field %q", member)
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// fieldsType is t without its pointers, or nil when its members are not
// fields: it decodes itself (time.Time), or it is an interface.
func fieldsType(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() == reflect.Interface {
		return nil
	}
	if p := reflect.PointerTo(t); p.Implements(unmarshalerType) || p.Implements(textUnmarshalerType) {
		return nil
	}
	return t
}

// jsonFields caches fieldsOf by type.
var jsonFields sync.Map // reflect.Type → map[string]reflect.Type

// fieldsOf is the JSON names of a struct type's fields, as encoding/json
// names them (embedded structs' fields promoted), with their types; nil for
// another type.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	if m, ok := jsonFields.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := map[string]reflect.Type{}
	for _, f := range reflect.VisibleFields(t) {
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		switch {
		case tag == "-":
			continue
		case f.Anonymous && name == "" && fieldsType(f.Type) != nil && fieldsType(f.Type).Kind() == reflect.Struct:
			continue // its fields are promoted, and listed by VisibleFields
		case !f.IsExported() || len(f.Index) > 1 && !promoted(t, f.Index):
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = f.Type
	}
	jsonFields.Store(t, m)
	return m
}

// promoted reports whether the field at index is reached through embedded
// structs that encoding/json flattens (untagged ones).
func promoted(t reflect.Type, index []int) bool {
	for _, i := range index[:len(index)-1] {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); !f.Anonymous || name != "" {
			return false
		}
		t = fieldsType(f.Type)
		if t == nil {
			return false
		}
	}
	return true
}
