package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/acme-pets/petstore/internal/mail"
)

// MailMessage is one plain-text mail to one address (package mail's).
type MailMessage = mail.Message

// Mailer sends mail: the command gives the SMTP sender (--smtp-url, a *mail.Sender);
// nil is a server without mail (invitations are not mailed, and password resets are
// not offered).
type Mailer interface {
	Send(ctx context.Context, m mail.Message) error
}

// resetMail is the mail of a password reset with its link, which works until expires.
func resetMail(to, link string, expires time.Time) MailMessage {
	return MailMessage{To: to, Subject: "Reset your pet store password", Text: fmt.Sprintf(
		"Someone asked to reset the password of your pet store account.\n\nOpen this link to choose a new one:\n\n%s\n\n"+
			"The link works once, until %s; it signs out your other console sessions. "+
			"If you did not ask for it, ignore this mail: your password stays as it is.\n",
		link, expires.UTC().Format(time.RFC1123))}
}

// background runs work after the answer that asked for it: at most a few at once,
// each within a time limit; past that, a job is dropped (and logged), so that a flood
// of requests cannot pile up goroutines or mail.
type background struct {
	slots chan struct{}
	wg    sync.WaitGroup
}

// backgroundJobs is how many reset mails are looked up and sent at once, and
// backgroundTimeout each one's limit. backgroundDelay is how long a job waits before
// it begins: the answer that started it is on its way by then, so the job's work (a
// lookup, for an account a write and a mail) does not slow that answer down, which
// would tell that the email has an account.
const (
	backgroundJobs    = 8
	backgroundTimeout = 30 * time.Second
	backgroundDelay   = 25 * time.Millisecond
)

func newBackground() *background { return &background{slots: make(chan struct{}, backgroundJobs)} }

// start runs job in its own goroutine, detached from the request (ctx's values are
// kept, not its end), unless every slot is taken.
func (b *background) start(ctx context.Context, log *slog.Logger, job func(context.Context)) {
	select {
	case b.slots <- struct{}{}:
	default:
		log.WarnContext(ctx, "background work dropped: too much at once", "request_id", RequestID(ctx))
		return
	}
	b.wg.Add(1)
	go func() {
		defer func() { <-b.slots; b.wg.Done() }()
		time.Sleep(backgroundDelay)
		jctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), backgroundTimeout)
		defer cancel()
		job(jctx)
	}()
}

// Wait waits for the work started so far, for a clean shutdown and for tests.
func (b *background) Wait() { b.wg.Wait() }
