package main

import "testing"

func TestParseWrk(t *testing.T) {
	out := `Running 10s test @ http://127.0.0.1:18095
  2 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     3.12ms    2.01ms  40.22ms   80.00%
  Latency Distribution
     50%  812.00us
     75%    3.90ms
     90%    5.20ms
     99%    1.02s
  182210 requests in 10.00s, 40.12MB read
  Non-2xx or 3xx responses: 12
Requests/sec:  18221.29
Transfer/sec:      4.01MB
`
	got := parseWrk(out)
	want := result{Requests: 182210, RPS: 18221.29, P50ms: 0.812, P99ms: 1020, Non2xx: 12}
	if got != want {
		t.Fatalf("parseWrk = %+v, want %+v", got, want)
	}
}
