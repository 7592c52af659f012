package media

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// S3 is a Store in a bucket of S3-compatible object storage, under a prefix. An
// object keeps its content type, and a PUT is atomic by S3's own rules.
type S3 struct {
	client *s3.Client
	bucket string
	prefix string // "" or ending in "/"
}

// deleteBatch is the most keys one DeleteObjects request takes.
const deleteBatch = 1000

// OpenS3 opens the store a URL names: s3://bucket/prefix, with the query parameters
// endpoint (an S3-compatible server's base URL, such as http://127.0.0.1:8333; then
// addressing is path-style, as such servers want) and region. Credentials and
// anything the URL leaves out come from the AWS SDK's default chain: the environment
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ENDPOINT_URL_S3…), the
// shared files, the instance's role.
func OpenS3(ctx context.Context, u *url.URL) (*S3, error) {
	if u.Scheme != "s3" || u.Host == "" {
		return nil, fmt.Errorf("media: %q is not s3://bucket/prefix", u.Redacted())
	}
	q := u.Query()
	for name := range q {
		if name != "endpoint" && name != "region" {
			return nil, fmt.Errorf("media: %s: unknown parameter %q (want endpoint or region)", u.Redacted(), name)
		}
	}
	endpoint := q.Get("endpoint")
	if endpoint != "" {
		if e, err := url.Parse(endpoint); err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" {
			return nil, fmt.Errorf("media: %s: endpoint %q is not an http(s) URL", u.Redacted(), endpoint)
		}
	}
	var opts []func(*config.LoadOptions) error
	if region := q.Get("region"); region != "" {
		opts = append(opts, config.WithRegion(region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("media: S3 configuration: %w", err)
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
			o.UsePathStyle = true
		}
	})
	return NewS3(client, u.Host, strings.Trim(u.Path, "/")), nil
}

// Check asks the server whether the bucket is there and the keys may reach it, so that
// a mistake in the URL or the keys shows when the service starts, not at its first
// upload.
func (s *S3) Check(ctx context.Context) error {
	if _, err := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(s.bucket)}); err != nil {
		return fmt.Errorf("media: bucket %s: %w", s.bucket, err)
	}
	return nil
}

// NewS3 returns the Store in bucket under prefix (a folder, without slashes at its
// ends; "" for the whole bucket), through client.
func NewS3(client *s3.Client, bucket, prefix string) *S3 {
	if prefix != "" {
		prefix += "/"
	}
	return &S3{client: client, bucket: bucket, prefix: prefix}
}

func (s *S3) objectKey(key string) (*string, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	return aws.String(s.prefix + key), nil
}

// Put uploads data under key with its content type.
func (s *S3) Put(ctx context.Context, key, contentType string, data []byte) error {
	k, err := s.objectKey(key)
	if err != nil {
		return err
	}
	_, err = s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:        &s.bucket,
		Key:           k,
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
		ContentType:   aws.String(contentType),
	})
	if err != nil {
		return fmt.Errorf("media: put %s: %w", key, err)
	}
	return nil
}

// Get downloads the object under key.
func (s *S3) Get(ctx context.Context, key string) (Object, error) {
	k, err := s.objectKey(key)
	if err != nil {
		return Object{}, err
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: k})
	if isNotFound(err) {
		return Object{}, ErrNotFound
	}
	if err != nil {
		return Object{}, fmt.Errorf("media: get %s: %w", key, err)
	}
	defer out.Body.Close()
	var buf bytes.Buffer
	if n := aws.ToInt64(out.ContentLength); n > 0 && n < 1<<30 {
		buf.Grow(int(n))
	}
	if _, err := io.Copy(&buf, out.Body); err != nil {
		return Object{}, fmt.Errorf("media: get %s: %w", key, err)
	}
	return Object{Data: buf.Bytes(), ContentType: aws.ToString(out.ContentType)}, nil
}

func isNotFound(err error) bool {
	var noKey *types.NoSuchKey
	var api smithy.APIError
	return errors.As(err, &noKey) || errors.As(err, &api) && (api.ErrorCode() == "NoSuchKey" || api.ErrorCode() == "NotFound")
}

// Delete removes the objects under keys, a thousand a request. Every key is checked
// first.
func (s *S3) Delete(ctx context.Context, keys ...string) error {
	ids := make([]types.ObjectIdentifier, len(keys))
	for i, key := range keys {
		k, err := s.objectKey(key)
		if err != nil {
			return err
		}
		ids[i] = types.ObjectIdentifier{Key: k}
	}
	for batch := range slices.Chunk(ids, deleteBatch) {
		if err := s.deleteObjects(ctx, batch); err != nil {
			return err
		}
	}
	return nil
}

func (s *S3) deleteObjects(ctx context.Context, ids []types.ObjectIdentifier) error {
	out, err := s.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
		Bucket: &s.bucket,
		Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)},
	})
	if err != nil {
		return fmt.Errorf("media: delete %d objects: %w", len(ids), err)
	}
	var errs []error
	for _, e := range out.Errors {
		if aws.ToString(e.Code) == "NoSuchKey" {
			continue
		}
		errs = append(errs, fmt.Errorf("media: delete %s: %s: %s", aws.ToString(e.Key), aws.ToString(e.Code), aws.ToString(e.Message)))
	}
	return errors.Join(errs...)
}

// List lists the objects whose keys start with prefix, a page (up to 1,000) at a time.
func (s *S3) List(ctx context.Context, prefix string, fn func(key string, modified time.Time) error) error {
	pages := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{
		Bucket: &s.bucket,
		Prefix: aws.String(s.prefix + prefix),
	})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("media: list %q: %w", prefix, err)
		}
		for _, o := range page.Contents {
			key := strings.TrimPrefix(aws.ToString(o.Key), s.prefix)
			if err := fn(key, aws.ToTime(o.LastModified)); err != nil {
				return fmt.Errorf("media: list %q: %w", prefix, err)
			}
		}
	}
	return nil
}
