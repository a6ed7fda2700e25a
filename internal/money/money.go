// Package money converts amounts between major and minor units exactly,
// using each currency's ISO 4217 number of decimals. Amounts are int64 minor
// units everywhere in tally; floats never hold money.
package money

import (
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/bojanz/currency"
)

// ValidCurrency reports whether code is an ISO 4217 currency code.
func ValidCurrency(code string) bool { return currency.IsValid(code) }

// Digits is the number of minor-unit decimals of a currency (2 for EUR, 0 for JPY).
func Digits(code string) (uint8, bool) { return currency.GetDigits(code) }

// maxAmountLen bounds an amount's text: 10^18 minor units with 4 decimals
// and a few zeros to spare.
const maxAmountLen = 40

// notDecimal reports the letters of NaN and Infinity, which the decimal
// parser accepts; e and E are exponents.
func notDecimal(r rune) bool { return unicode.IsLetter(r) && r != 'e' && r != 'E' }

// MinorUnits converts a decimal amount in major units ("49.99") into minor
// units of the currency (4999). An amount with more decimals than the
// currency has (JPY "10.5") is an error rather than silently rounded.
func MinorUnits(amount, code string) (int64, error) {
	code = strings.ToUpper(strings.TrimSpace(code))
	if !currency.IsValid(code) {
		return 0, fmt.Errorf("%q is not an ISO 4217 currency code", code)
	}
	amount = strings.TrimSpace(amount)
	if len(amount) > maxAmountLen {
		// parsing and rounding take time quadratic in the digits
		return 0, fmt.Errorf("an amount has at most %d characters", maxAmountLen)
	}
	a, err := currency.NewAmount(amount, code)
	if err != nil || strings.ContainsFunc(amount, notDecimal) {
		return 0, fmt.Errorf("%q is not a decimal number", amount)
	}
	digits, _ := currency.GetDigits(code)
	if f, _ := strconv.ParseFloat(amount, 64); math.Abs(f)*math.Pow10(int(digits)) >= math.MaxInt64 {
		// before rounding, which would take it for too many decimals
		return 0, fmt.Errorf("%s is too large", amount)
	}
	if !a.Round().Equal(a) {
		return 0, fmt.Errorf("%s has %d decimal places; %s has more", code, digits, amount)
	}
	n, err := a.Int64()
	if err != nil {
		return 0, fmt.Errorf("%s is too large", amount)
	}
	return n, nil
}

// Major writes minor units of a currency as a plain decimal in major units:
// Major(1000000, "EUR") = "10000.00", Major(1000, "JPY") = "1000".
func Major(amount int64, code string) string {
	a, err := currency.NewAmountFromInt64(amount, code)
	if err != nil {
		return strconv.FormatInt(amount, 10)
	}
	return a.Number()
}

// Convert turns minor units of from into minor units of to, given how many
// units of each one euro buys (the ECB's reference rates, as decimals):
// amount × 10^(digits(to)-digits(from)) × toPerEUR / fromPerEUR, rounded
// half away from zero. It computes with exact rationals; the returned rate
// (to per from, 12 decimals) is for the record.
func Convert(amount int64, from, to, fromPerEUR, toPerEUR string) (int64, string, error) {
	df, ok1 := currency.GetDigits(from)
	dt, ok2 := currency.GetDigits(to)
	if !ok1 || !ok2 {
		return 0, "", fmt.Errorf("money: unknown currency %s or %s", from, to)
	}
	rf, ok1 := new(big.Rat).SetString(fromPerEUR)
	rt, ok2 := new(big.Rat).SetString(toPerEUR)
	if !ok1 || !ok2 || rf.Sign() <= 0 || rt.Sign() <= 0 {
		return 0, "", fmt.Errorf("money: bad rate %q or %q", fromPerEUR, toPerEUR)
	}
	rate := new(big.Rat).Quo(rt, rf)
	v := new(big.Rat).Mul(new(big.Rat).SetInt64(amount), rate)
	scale := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(int(dt)-int(df)))), nil))
	if dt >= df {
		v.Mul(v, scale)
	} else {
		v.Quo(v, scale)
	}
	n, ok := roundHalfAway(v)
	if !ok {
		return 0, "", fmt.Errorf("money: %d %s does not fit in %s minor units", amount, from, to)
	}
	return n, rate.FloatString(12), nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// roundHalfAway rounds a rational to the nearest integer, halves away from zero.
func roundHalfAway(v *big.Rat) (int64, bool) {
	num, den := new(big.Int).Set(v.Num()), v.Denom()
	neg := num.Sign() < 0
	num.Abs(num)
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	if new(big.Int).Mul(r, big.NewInt(2)).Cmp(den) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if neg {
		q.Neg(q)
	}
	if !q.IsInt64() {
		return 0, false
	}
	return q.Int64(), true
}

// Format renders an amount in minor units for people, in English
// conventions: Format(123456, "EUR") = "€1,234.56", Format(1000, "JPY") = "¥1,000".
func Format(amount int64, code string) string {
	a, err := currency.NewAmountFromInt64(amount, code)
	if err != nil {
		return fmt.Sprintf("%d %s", amount, code)
	}
	return currency.NewFormatter(currency.NewLocale("en")).Format(a)
}

// Currencies lists the ISO 4217 codes, sorted.
func Currencies() []string {
	codes := currency.GetCurrencyCodes()
	sort.Strings(codes)
	return codes
}
