// Package transform implements the connector field transforms (add_fields, delete_fields, filter_fields, update_fields, unwrap_envelope) run in config order.
package transform
