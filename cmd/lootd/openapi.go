package main

import (
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// encodeOpenAPI is the OpenAPI 3.1 description of both listeners, built
// from rs (routes) and the Go types of the bodies, so it says what the
// handlers do: a field added to sessionJSON is in the document the next
// build. Served at GET /openapi.json on the internal listener, encoded
// once per server (server.openapi).
func encodeOpenAPI(rs []route) []byte {
	b, err := json.MarshalIndent(buildOpenAPI(rs), "", "  ")
	if err != nil {
		panic("lootd: the OpenAPI document does not encode: " + err.Error())
	}
	return append(b, '\n')
}

func (s *server) serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(s.openapi())
}

type object = map[string]any

// statusDocs says what each status means, with the error codes it
// carries (api.go's lootErrors, decode, auth).
var statusDocs = map[int]string{
	200: "OK",
	201: "Created",
	400: "Bad input: bad_json, unknown_field, wrong_type, missing_field, bad_argument, bad_intent, player_in_body, fair_score_in_body",
	401: "unauthenticated: no valid player identity (Bearer token or the trusted header)",
	403: "not_member",
	404: "not_found (to a player also a session they are not a member of)",
	409: "The session's state refuses it: claims_closed, not_due, already_settling, already_settled, canceled, conflict, taken_over",
	413: "body_too_large",
	501: "not_implemented: the store does not list sessions",
	503: "outcome_unknown (the store did not confirm; repeat the same request, every endpoint is idempotent) or store_unreachable; Retry-After in seconds",
}

// enums are the values of the string types the bodies carry.
var enums = map[reflect.Type][]string{
	reflect.TypeFor[loot.Status]():      {"OPEN", "CLAIMING", "SETTLING", "CLOSED", "CANCELED"},
	reflect.TypeFor[loot.Intent]():      {"NEED", "GREED", "PASS"},
	reflect.TypeFor[loot.GrantStatus](): {"PENDING", "SUCCESS"},
}

var pathParam = regexp.MustCompile(`\{([A-Za-z]+)\}`)

func buildOpenAPI(rs []route) object {
	schemas := object{"Error": schemaOf(reflect.TypeFor[apiError](), nil)}
	paths := object{}
	for _, rt := range rs {
		op := object{
			"summary":     rt.summary,
			"operationId": rt.listener + ":" + rt.method + ":" + rt.path,
			"tags":        []string{rt.listener},
			"responses":   responses(rt, schemas),
		}
		var params []object
		for _, m := range pathParam.FindAllStringSubmatch(rt.path, -1) {
			params = append(params, object{"name": m[1], "in": "path", "required": true, "schema": object{"type": "string"}})
		}
		for _, q := range rt.query {
			sch := object{"type": "string"}
			switch q.format {
			case "integer":
				sch = object{"type": "integer", "minimum": 1, "maximum": maxPage}
			case "":
			default:
				sch["format"] = q.format
			}
			params = append(params, object{"name": q.name, "in": "query", "required": false, "description": q.doc, "schema": sch})
		}
		if params != nil {
			op["parameters"] = params
		}
		if rt.request != nil {
			op["requestBody"] = object{"required": true, "content": object{"application/json": object{"schema": ref(reflect.TypeOf(rt.request), schemas)}}}
		}
		if rt.listener == playerListener {
			op["security"] = []object{{"bearerToken": []string{}}, {"playerHeader": []string{}}}
		}
		item, _ := paths[rt.path].(object)
		if item == nil {
			item = object{}
			paths[rt.path] = item
		}
		item[strings.ToLower(rt.method)] = op
	}
	return object{
		"openapi": "3.1.0",
		"info": object{
			"title":   "lootd",
			"version": "1",
			"description": "The loot allocation service: ref/loot over HTTP/JSON. Two listeners: player (tag player: " +
				"-listen) and internal (tag internal: -internal, never exposed to players). A connection over a " +
				"listener's cap is answered 503 too_many_connections and closed.",
		},
		"paths": paths,
		"components": object{
			"schemas": schemas,
			"securitySchemes": object{
				"bearerToken": object{"type": "http", "scheme": "bearer",
					"description": "an HMAC-SHA256 token minted by `lootd token` with the key of -token-key-file"},
				"playerHeader": object{"type": "apiKey", "in": "header", "name": "X-Player-Id",
					"description": "the player id in the header named by -player-header (X-Player-Id here), trusted only behind a gateway that strips it from clients"},
			},
		},
	}
}

// responses documents rt's statuses: the successes with rt's response
// body, the rest with Error.
func responses(rt route, schemas object) object {
	out := object{}
	for _, st := range rt.statuses {
		r := object{"description": statusDocs[st]}
		switch {
		case st >= 300:
			r["content"] = object{"application/json": object{"schema": object{"$ref": "#/components/schemas/Error"}}}
			if st == http.StatusServiceUnavailable {
				r["headers"] = object{"Retry-After": object{"description": "seconds", "schema": object{"type": "integer"}}}
			}
		case rt.response == nil:
		case reflect.TypeOf(rt.response).Kind() == reflect.String:
			r["content"] = object{rt.response.(string): object{}}
		default:
			r["content"] = object{"application/json": object{"schema": ref(reflect.TypeOf(rt.response), schemas)}}
		}
		out[strconv.Itoa(st)] = r
	}
	return out
}

// ref is a $ref to t's schema, which it adds to schemas under t's name.
func ref(t reflect.Type, schemas object) object {
	name := schemaName(t)
	if _, ok := schemas[name]; !ok {
		schemas[name] = object{} // placed first: a type that refers to itself terminates
		schemas[name] = schemaOf(t, schemas)
	}
	return object{"$ref": "#/components/schemas/" + name}
}

// schemaName is the name of a body type in the document: sessionJSON is
// Session, openRequest OpenRequest.
func schemaName(t reflect.Type) string {
	n := strings.TrimSuffix(t.Name(), "JSON")
	if t == reflect.TypeFor[apiError]() {
		return "Error"
	}
	return strings.ToUpper(n[:1]) + n[1:]
}

// schemaOf is t's JSON schema as encoding/json writes and decode reads it:
// fields by their json names (embedded structs flattened), required unless
// omitempty or a pointer, a pointer nullable. json.RawMessage fields are
// left out: the bodies declare them only to refuse them (intentRequest's
// playerId and fairScore).
func schemaOf(t reflect.Type, schemas object) object {
	if vs, ok := enums[t]; ok {
		return object{"type": "string", "enum": vs}
	}
	switch t {
	case reflect.TypeFor[time.Time]():
		return object{"type": "string", "format": "date-time"}
	case reflect.TypeFor[json.RawMessage]():
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		if e := t.Elem(); e.Kind() == reflect.Struct && e != reflect.TypeFor[time.Time]() {
			return object{"oneOf": []object{ref(e, schemas), {"type": "null"}}}
		}
		s := schemaOf(t.Elem(), schemas)
		if typ, ok := s["type"].(string); ok {
			s["type"] = []string{typ, "null"}
		}
		return s
	case reflect.String:
		return object{"type": "string"}
	case reflect.Bool:
		return object{"type": "boolean"}
	case reflect.Int, reflect.Int64:
		return object{"type": "integer", "format": "int64"}
	case reflect.Int32:
		return object{"type": "integer", "format": "int32"}
	case reflect.Uint64:
		return object{"type": "integer", "minimum": 0}
	case reflect.Slice:
		return object{"type": "array", "items": itemSchema(t.Elem(), schemas)}
	case reflect.Struct:
		props, required := object{}, []string{}
		addFields(t, schemas, props, &required)
		out := object{"type": "object", "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			out["required"] = required
		}
		return out
	}
	panic("lootd: no OpenAPI schema for " + t.String())
}

func itemSchema(t reflect.Type, schemas object) object {
	if t.Kind() == reflect.Struct && t != reflect.TypeFor[time.Time]() {
		return ref(t, schemas)
	}
	return schemaOf(t, schemas)
}

func addFields(t reflect.Type, schemas, props object, required *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			addFields(f.Type, schemas, props, required)
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" || name == "" {
			continue
		}
		s := itemSchema(f.Type, schemas)
		if f.Type.Kind() == reflect.Slice || f.Type.Kind() == reflect.Pointer || f.Type == reflect.TypeFor[time.Time]() {
			s = schemaOf(f.Type, schemas)
		}
		if s == nil {
			continue
		}
		props[name] = s
		if !strings.Contains(opts, "omitempty") && f.Type.Kind() != reflect.Pointer {
			*required = append(*required, name)
		}
	}
}
