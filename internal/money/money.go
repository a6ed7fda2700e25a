// Package money converts amounts between major and minor units exactly,
// using each currency's ISO 4217 number of decimals. Amounts are int64 minor
// units everywhere in tally; floats never hold money.
package money

import (
	"fmt"
	"strings"

	"github.com/bojanz/currency"
)

// ValidCurrency reports whether code is an ISO 4217 currency code.
func ValidCurrency(code string) bool { return currency.IsValid(code) }

// Digits is the number of minor-unit decimals of a currency (2 for EUR, 0 for JPY).
func Digits(code string) (uint8, bool) { return currency.GetDigits(code) }

// MinorUnits converts a decimal amount in major units ("49.99") into minor
// units of the currency (4999). An amount with more decimals than the
// currency has (JPY "10.5") is an error rather than silently rounded.
func MinorUnits(amount, code string) (int64, error) {
	code = strings.ToUpper(strings.TrimSpace(code))
	if !currency.IsValid(code) {
		return 0, fmt.Errorf("%q is not an ISO 4217 currency code", code)
	}
	a, err := currency.NewAmount(strings.TrimSpace(amount), code)
	if err != nil {
		return 0, fmt.Errorf("%q is not a decimal number", amount)
	}
	if !a.Round().Equal(a) {
		digits, _ := currency.GetDigits(code)
		return 0, fmt.Errorf("%s has %d decimal places; %s has more", code, digits, amount)
	}
	n, err := a.Int64()
	if err != nil {
		return 0, fmt.Errorf("%s is too large", amount)
	}
	return n, nil
}
