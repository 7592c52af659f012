package httpapi_test

import "fmt"

func path(format string, args ...any) string { return fmt.Sprintf(format, args...) }
