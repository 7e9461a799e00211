package telegram

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"io"
	"net/http"

	"github.com/go-telegram/bot/models"

	"ralph/internal/httpcap"
)

// webhook takes the updates Telegram posts to WebhookPath. The library's
// own handler is not used: it compares the secret in variable time and
// answers 200 even to a request it threw away. Here a missing or wrong
// secret gets 401, and an update arriving before Run gets 503, which
// Telegram retries. The body is capped (Routes) before it is read, and
// read only after the secret matched.
func (b *Bot) webhook(w http.ResponseWriter, r *http.Request) {
	got := sha256.Sum256([]byte(r.Header.Get("X-Telegram-Bot-Api-Secret-Token")))
	want := sha256.Sum256([]byte(b.cfg.WebhookSecret))
	if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
		if !b.quiet("webhook secret") {
			b.logf("webhook call without the right secret token (from %s): refused", r.RemoteAddr)
		}
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	if !b.ready.Load() {
		http.Error(w, "starting", http.StatusServiceUnavailable)
		return
	}
	body, err := io.ReadAll(r.Body)
	if httpcap.TooLarge(err) {
		httpcap.RefuseTooLarge(w, httpcap.WebhookBody)
		return
	}
	var upd models.Update
	if err == nil {
		err = json.Unmarshal(body, &upd)
	}
	if err != nil || upd.ID == 0 {
		http.Error(w, "not an update", http.StatusBadRequest)
		return
	}
	b.onUpdate(b.ctx, nil, &upd)
	w.WriteHeader(http.StatusOK)
}
