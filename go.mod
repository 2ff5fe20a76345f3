module github.com/iggy-connectors-go/runtime

go 1.26.8

require (
	github.com/BurntSushi/toml v1.6.0 // indirect
	github.com/apache/iggy/foreign/go v0.8.0 // indirect
	github.com/avast/retry-go/v5 v5.0.0 // indirect
	github.com/caarlos0/env/v11 v11.4.2 // indirect
	github.com/ebitengine/purego v0.11.3 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/klauspost/compress v1.20.1 // indirect
	github.com/klauspost/cpuid/v2 v2.2.10 // indirect
	github.com/prometheus/client_golang v1.25.0 // indirect
	github.com/prometheus/common v0.73.1 // indirect
	github.com/shirou/gopsutil/v4 v4.26.10 // indirect
	github.com/zeebo/xxh3 v1.1.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
