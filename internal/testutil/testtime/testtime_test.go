package testtime

import "testing"

func TestCompute(t *testing.T) {
	for _, tc := range []struct {
		env  string
		load float64
		want float64
		bad  bool
	}{
		{"", 0, 1, false},
		{"", 0.5, 1.5, false},
		{"", 9, maxAuto, false}, // capped
		{"3", 9, 3, false},      // the variable wins over the load
		{"1", 2, 1, false},
		{"0.5", 0, 0, true},
		{"fast", 0, 0, true},
	} {
		got, err := compute(tc.env, tc.load)
		if tc.bad {
			if err == nil {
				t.Errorf("compute(%q, %v) = %v, want an error", tc.env, tc.load, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("compute(%q, %v) = %v, %v; want %v", tc.env, tc.load, got, err, tc.want)
		}
	}
}
