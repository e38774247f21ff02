package config

import "os"

// Load is LoadEnv with the process environment.
func Load(path string) (*Config, error) { return LoadEnv(path, os.Getenv) }

// Decode is DecodeEnv with the process environment.
func Decode(data []byte, file string) (*Config, error) { return DecodeEnv(data, file, os.Getenv) }

// HasPlaceholder reports whether s contains a placeholder.
func HasPlaceholder(s string) bool { return usedPlaceholder(s, placeholderNames) != "" }
