// Package provider fetches and stores connector configurations: the local directory provider and the HTTP config API provider.
package provider
