# One connector (the stdout sink) as a Nomad service job: one iggy-connector-runner container,
# configured by environment variables only. Copy the job per connector and change the config.
#
#   nomad var put nomad/jobs/iggy-connector-stdout-sink iggy_password=... api_key="$(openssl rand -hex 32)"
#   nomad job run compose/nomad/iggy-connector-runner.nomad.hcl
#
# The endpoint listens on 0.0.0.0, so it needs its API key: without one it refuses POST /pause
# and /resume. Both secrets come from the job's Nomad variable (with Vault, render them with
# {{ with secret "kv/data/iggy-connectors" }}{{ .Data.data.api_key }}{{ end }} instead). Prometheus
# scrapes /metrics with the same key as a Bearer token (authorization.credentials_file).
#
# The image is images/runner/Dockerfile built with --target runner-with-examples and pushed to a
# registry your clients can pull from; a real connector's plugin comes in a derived image.
job "iggy-connector-stdout-sink" {
  type = "service"

  group "connector" {
    # One runner per connector: a sink with a consumer group could run more, a source should not.
    count = 1

    network {
      mode = "bridge"
      port "http" {
        to = 8081
      }
    }

    # For the fleet view (iggy-connectors with [fleet] enabled, compose/README.md): register with
    # provider = "consul" instead, and Consul DNS serves this service's SRV records as
    # _iggy-connector-stdout-sink._tcp.service.consul, the name to list in fleet.dns.
    service {
      name     = "iggy-connector-stdout-sink"
      provider = "nomad"
      port     = "http"

      check {
        type     = "http"
        path     = "/health"
        interval = "10s"
        timeout  = "3s"
      }
    }

    # The runner exits non-zero when its connector fails for good; Nomad restarts it.
    restart {
      attempts = 10
      interval = "10m"
      delay    = "5s"
      mode     = "delay"
    }

    task "runner" {
      driver = "docker"

      config {
        image = "registry.example.com/iggy-connector-runner:examples"
        ports = ["http"]
      }

      env {
        IGGY_CONNECTORS_IGGY_ADDRESS         = "iggy.service.consul:8090"
        IGGY_CONNECTORS_IGGY_USERNAME        = "iggy"
        IGGY_CONNECTORS_HTTP_ADDRESS         = "0.0.0.0:8081"
        IGGY_CONNECTORS_HTTP_METRICS_ENABLED = "true"
        IGGY_CONNECTORS_LOGGING_FORMAT       = "json"
        IGGY_CONNECTOR_SHUTDOWN_TIMEOUT      = "10s"
        IGGY_CONNECTOR_CONFIG                = <<-EOT
          type = "sink"
          key = "stdout"
          enabled = true
          version = 1
          name = "Stdout sink"
          path = "/opt/iggy/connectors/libiggy_connector_stdout_sink"

          [[streams]]
          stream = "demo_stream"
          topics = ["demo_topic"]
          schema = "json"
          batch_length = 100
          poll_interval = "5ms"
          consumer_group = "stdout_sink_connector"

          [plugin_config]
          print_payload = true
        EOT
      }

      # The password and the API key come from a Nomad variable, rendered as an environment file
      # in the task's private secrets/ directory.
      template {
        destination = "secrets/iggy.env"
        env         = true
        data        = <<-EOT
          IGGY_CONNECTORS_IGGY_PASSWORD={{ with nomadVar "nomad/jobs/iggy-connector-stdout-sink" }}{{ .iggy_password }}{{ end }}
          IGGY_CONNECTORS_HTTP_API_KEY={{ with nomadVar "nomad/jobs/iggy-connector-stdout-sink" }}{{ .api_key }}{{ end }}
        EOT
      }

      # Longer than IGGY_CONNECTOR_SHUTDOWN_TIMEOUT, so the in-flight batch settles before SIGKILL.
      kill_signal  = "SIGTERM"
      kill_timeout = "20s"

      resources {
        cpu    = 200
        memory = 128
      }
    }
  }
}
