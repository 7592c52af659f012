package s3test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestTheServerKeepsObjectsAndRefusesOtherKeys stores an object and reads it back with
// the server's keys, and is refused with other keys: the identity is enforced.
func TestTheServerKeepsObjectsAndRefusesOtherKeys(t *testing.T) {
	s := Start(t)
	ctx := context.Background()
	c := s.Client()
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(s.Bucket), Key: aws.String("a/b.txt"), Body: strings.NewReader("hello")}); err != nil {
		t.Fatal(err)
	}
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.Bucket), Key: aws.String("a/b.txt")})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(out.Body)
	out.Body.Close()
	if string(b) != "hello" {
		t.Errorf("read %q, want hello", b)
	}
	if keys := s.Keys(t, "a/"); len(keys) != 1 || keys[0] != "a/b.txt" {
		t.Errorf("keys under a/: %v", keys)
	}
	stranger := s3.New(s3.Options{Region: Region, BaseEndpoint: aws.String(s.Endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider("someone", "else", "")})
	if _, err := stranger.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.Bucket), Key: aws.String("a/b.txt")}); err == nil {
		t.Error("a stranger's keys read the object")
	}
}
