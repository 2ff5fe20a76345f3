package config_test

import (
	"reflect"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// Tokens in URLs are masked wherever a URL appears in a string: userinfo, query and fragment
// parameters named like a secret or a token, and path segments that look like a credential (16
// characters with a digit, or 24 of any kind); the host, the other segments and the parameter
// names stay. Masking twice changes nothing more.
func TestMaskURLs(t *testing.T) {
	cases := []struct{ in, want string }{
		{"https://hooks.example.com/services/T0/B0/XXXXXXXXXXXXXXXXXXXXXXXX", "https://hooks.example.com/services/T0/B0/******"},
		{"https://hooks.slack.com/services/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", "https://hooks.slack.com/services/T0123ABCD/B0123ABCD/******"},
		{"https://discord.com/api/webhooks/123456789012345678/aBc-DeF_gHi", "https://discord.com/api/webhooks/******/aBc-DeF_gHi"},
		{"https://api.telegram.org/bot123456:ABC-DEF1234ghIkl/sendMessage", "https://api.telegram.org/******/sendMessage"},
		{"https://x.example/webhookb2/9f2c7a1e-51b4-4e8e-9a0e-0c2a3b4c5d6e/IncomingWebhook", "https://x.example/webhookb2/******/IncomingWebhook"},
		{"https://api.example.com/v1/send?token=abc&channel=ops", "https://api.example.com/v1/send?token=******&channel=ops"},
		{"https://api.example.com/cb?access_token=a.b.c&state=s#x", "https://api.example.com/cb?access_token=******&state=s#x"},
		{"https://app.example/#access_token=t1&token_type=bearer", "https://app.example/#access_token=******&token_type=******"},
		{"https://blob.example/c/f.txt?sv=2022&sig=AbC%2Fd%3D&se=2030", "https://blob.example/c/f.txt?sv=2022&sig=******&se=2030"},
		{"https://s3.example/b/k?X-Amz-Credential=AKIA%2F1&X-Amz-Signature=ff00", "https://s3.example/b/k?X-Amz-Credential=******&X-Amz-Signature=******"},
		{"https://maps.example/api?key=AIzaSy0&q=x;client_secret=s", "https://maps.example/api?key=******&q=x;client_secret=******"},
		{"postgres://u:p@db:5432/app?sslmode=require&password=x", "postgres://u:******@db:5432/app?sslmode=require&password=******"},
		{"see https://tok@git.example/repo and http://plain.example/docs/getting-started", "see https://******@git.example/repo and http://plain.example/docs/getting-started"},
		{`{"url":"https://h.example/p?token=t"}`, `{"url":"https://h.example/p?token=******"}`},
		{"no url here: user:pass@host?token=x", "no url here: user:pass@host?token=x"},
		{"https://api.example.com/v1/users/42?page=2&empty_token=", "https://api.example.com/v1/users/42?page=2&empty_token="},
	}
	for _, c := range cases {
		got := config.MaskURLs(c.in)
		if got != c.want {
			t.Errorf("MaskURLs(%q) =\n %q\nwant\n %q", c.in, got, c.want)
		}
		if again := config.MaskURLs(got); again != got {
			t.Errorf("MaskURLs of its own output %q = %q", got, again)
		}
	}
}

// The default secret keys include the words of the second review; a webhook URL in plugin_config
// is masked in API answers.
func TestDefaultSecretKeysSecondReview(t *testing.T) {
	in := map[string]any{"ssh_passphrase": "a", "Authorization": "Bearer b", "tls_client_key": "c", "signing_key": "d", "jwt": "e",
		"webhook_url": "https://hooks.example.com/services/T0/B0/XXXXXXXXXXXXXXXXXXXXXXXX", "user": "u", "key_id": "k1"}
	want := map[string]any{"ssh_passphrase": "******", "Authorization": "******", "tls_client_key": "******", "signing_key": "******", "jwt": "******",
		"webhook_url": "https://hooks.example.com/services/T0/B0/******", "user": "u", "key_id": "k1"}
	if got := defaultSecrets.Mask(in); !reflect.DeepEqual(got, want) {
		t.Errorf("Mask =\n %v\nwant\n %v", got, want)
	}
}
