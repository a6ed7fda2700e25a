package referrer

// aiAssistants maps the hosts of AI chat assistants, which the vendored list
// predates, to the names dashboards show. Links clicked in an answer are
// referrals: the assistant is neither a search engine nor a social network.
var aiAssistants = map[string]string{
	"chatgpt.com":           "ChatGPT",
	"chat.openai.com":       "ChatGPT",
	"perplexity.ai":         "Perplexity",
	"www.perplexity.ai":     "Perplexity",
	"claude.ai":             "Claude",
	"gemini.google.com":     "Gemini",
	"copilot.microsoft.com": "Copilot",
	"you.com":               "You.com",
	"phind.com":             "Phind",
	"chat.deepseek.com":     "DeepSeek",
	"grok.com":              "Grok",
	"meta.ai":               "Meta AI",
	"poe.com":               "Poe",
}
