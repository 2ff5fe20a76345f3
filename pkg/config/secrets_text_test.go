package config_test

import "testing"

// Secret-looking pairs in free text: key=value, key: value (to the end of the line) and
// "key": "value", with a scheme's token taken along; other pairs, null and masked values stay.
func TestSecretKeysMaskText(t *testing.T) {
	cases := []struct{ in, want string }{
		{"password=hunter2&user=bob", "password=******&user=bob"},
		{"db_password = 'p w' host=h", "db_password = '******' host=h"},
		{`{"api_key": "sk_1", "name": "n"`, `{"api_key": "******", "name": "n"`},
		{`"client-secret" : 'cs'`, `"client-secret" : '******'`},
		{"Authorization: Basic dXNlcjpwYXNz\nnext: line", "Authorization: ******\nnext: line"},
		{"authorization=Bearer abc.def&x=1", "authorization=******&x=1"},
		{"X-Api-Key: k-1 is not valid, retry", "X-Api-Key: ******, retry"},
		{`token: "a \" b" rest`, `token: "******" rest`},
		{`{"token":null,"secret":"","pwd":"******"}`, `{"token":null,"secret":"","pwd":"******"}`},
		{"see https://u:p@h.example/x?token=t for user: bob", "see https://u:******@h.example/x?token=****** for user: bob"},
		{"no pairs here", "no pairs here"},
	}
	for _, c := range cases {
		if got := defaultSecrets.MaskText(c.in); got != c.want {
			t.Errorf("MaskText(%q) =\n %q\nwant\n %q", c.in, got, c.want)
		}
	}
}
