package httpapi_test

import "fmt"

func path(format string, args ...any) string { return fmt.Sprintf(format, args...) }

func itoa(n int64) string { return fmt.Sprint(n) }
