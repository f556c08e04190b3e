package redisnode

// globMatch is Redis 7.0's stringmatchlen (util.c), case-sensitive, as KEYS
// uses it: * ? [abc] [^a-z] and \ escapes; an unclosed [ matches as if closed.
func globMatch(pattern, str string) bool {
	skipLonger := false
	return globMatchAt(pattern, str, &skipLonger, 0)
}

// maxGlobNesting is Redis's guard against patterns like "*a*a*a*...".
const maxGlobNesting = 1000

func globMatchAt(pat, str string, skipLonger *bool, nesting int) bool {
	if nesting > maxGlobNesting {
		return false
	}
	p, s := 0, 0
	for p < len(pat) && s < len(str) {
		switch pat[p] {
		case '*':
			return globMatchStar(pat[p:], str[s:], skipLonger, nesting)
		case '?':
			s++
		case '[':
			var match bool
			p, match = globMatchClass(pat, p, str[s])
			if !match {
				return false
			}
			s++
		case '\\':
			if len(pat)-p >= 2 {
				p++
			}
			if pat[p] != str[s] {
				return false
			}
			s++
		default:
			if pat[p] != str[s] {
				return false
			}
			s++
		}
		p++
		if s == len(str) {
			for p < len(pat) && pat[p] == '*' {
				p++
			}
			break
		}
	}
	return p == len(pat) && s == len(str)
}

// globMatchStar matches pat, which starts with a '*', against str, which is
// not empty: the rest of the pattern is tried from every position of str.
func globMatchStar(pat, str string, skipLonger *bool, nesting int) bool {
	p := 0
	for p+1 < len(pat) && pat[p+1] == '*' {
		p++
	}
	if p == len(pat)-1 {
		return true
	}
	for s := 0; s < len(str); s++ {
		if globMatchAt(pat[p+1:], str[s:], skipLonger, nesting+1) {
			return true
		}
		if *skipLonger {
			return false
		}
	}
	// No match for the rest from anywhere: a longer match for an
	// earlier '*' cannot help either (Redis's skipLongerMatches).
	*skipLonger = true
	return false
}

// globMatchClass matches ch against the class whose '[' is at pat[p]. It
// returns the index of the class's closing ']', or, for an unclosed class,
// of the pattern's last byte, so that the caller's step past it ends the
// pattern.
func globMatchClass(pat string, p int, ch byte) (int, bool) {
	p++
	not := p < len(pat) && pat[p] == '^'
	if not {
		p++
	}
	match := false
	c := int8(ch) // C's char is signed on the platforms Redis runs on
	for {
		if p < len(pat) && pat[p] == '\\' && len(pat)-p >= 2 {
			p++
			if pat[p] == ch {
				match = true
			}
		} else if p < len(pat) && pat[p] == ']' {
			break
		} else if p >= len(pat) {
			p-- // unclosed: step back so the caller's p++ ends the pattern
			break
		} else if len(pat)-p >= 3 && pat[p+1] == '-' {
			lo, hi := int8(pat[p]), int8(pat[p+2])
			if lo > hi {
				lo, hi = hi, lo
			}
			p += 2
			if c >= lo && c <= hi {
				match = true
			}
		} else if pat[p] == ch {
			match = true
		}
		p++
	}
	if not {
		match = !match
	}
	return p, match
}
