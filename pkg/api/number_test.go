package api

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestNumber(t *testing.T) {
	var p PaymentRequest
	if err := json.Unmarshal([]byte(`{"amount":-49.5e1}`), &p); err != nil || p.Amount != "-49.5e1" {
		t.Errorf("a number: %q, %v", p.Amount, err)
	}
	p = PaymentRequest{Amount: "7"}
	if err := json.Unmarshal([]byte(`{"amount":null}`), &p); err != nil || p.Amount != "7" {
		t.Errorf("null: %q, %v; want the value left as it was", p.Amount, err)
	}
	for body, value := range map[string]string{`{"amount":"1000"}`: "string", `{"amount":[1]}`: "array",
		`{"amount":{}}`: "object", `{"amount":false}`: "bool"} {
		var te *json.UnmarshalTypeError
		err := json.Unmarshal([]byte(body), &p)
		if !errors.As(err, &te) || te.Field != "amount" || te.Value != value {
			t.Errorf("%s: %v; want a type error of a %s in amount", body, err, value)
		}
	}
	for n, want := range map[Number]string{"": `{"amount":0}`, "49.99": `{"amount":49.99}`} {
		if b, err := json.Marshal(Revenue{Amount: n}); err != nil || string(b) != want[:len(want)-1]+`,"currency":""}` {
			t.Errorf("marshal %q: %s, %v", n, b, err)
		}
	}
	if _, err := json.Marshal(Revenue{Amount: `"49.99"`}); err == nil {
		t.Error("a Number that is not a JSON number marshalled")
	}
}
