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
			for p+1 < len(pat) && pat[p+1] == '*' {
				p++
			}
			if p == len(pat)-1 {
				return true
			}
			for s < len(str) {
				if globMatchAt(pat[p+1:], str[s:], skipLonger, nesting+1) {
					return true
				}
				if *skipLonger {
					return false
				}
				s++
			}
			// No match for the rest from anywhere: a longer match for an
			// earlier '*' cannot help either (Redis's skipLongerMatches).
			*skipLonger = true
			return false
		case '?':
			s++
		case '[':
			p++
			not := p < len(pat) && pat[p] == '^'
			if not {
				p++
			}
			match := false
			c := int8(str[s]) // C's char is signed on the platforms Redis runs on
			for {
				if p < len(pat) && pat[p] == '\\' && len(pat)-p >= 2 {
					p++
					if pat[p] == str[s] {
						match = true
					}
				} else if p < len(pat) && pat[p] == ']' {
					break
				} else if p >= len(pat) {
					p-- // unclosed: step back so the p++ below ends the pattern
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
				} else if pat[p] == str[s] {
					match = true
				}
				p++
			}
			if not {
				match = !match
			}
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
