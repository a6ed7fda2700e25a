package stats

// ChannelSQL is the channel rule on the columns of a visit (attribution
// "") or of a payment's touch of an attribution model, and its arguments:
// for the test that runs it on ClickHouse.
func ChannelSQL(attribution string) (string, []any) {
	if attribution == "" {
		return channelExpr(visitColumns, channelSets)
	}
	return channelExpr(paymentChannelColumns(attribution), channelSets)
}
