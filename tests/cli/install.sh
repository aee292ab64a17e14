#!/bin/sh
# Tests of `make install` and `make uninstall`: into a DESTDIR, with the
# default PREFIX and another one; a program built against the installed
# argus.h and argus.pc (pkg-config with a sysroot) links and runs with
# the installed libargus; the soname and its links; the bash completion
# knows every command and option; uninstall leaves no file behind.
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
T=$(mktemp -d /tmp/argus-install-XXXXXX)
trap 'rm -rf "$T"' EXIT

SUITE=install
. tests/lib.sh

MAKE=${MAKE:-make}
# the installed files (and links), relative to the DESTDIR
files() { (cd "$1" && find . ! -type d | sort); }

D=$T/dest
if $MAKE -s --no-print-directory install B="$B" BIN="$ARGUS" DESTDIR="$D" \
    > "$T/log" 2>&1; then
	ok "make install"
else
	nok "make install" "$(tail -n 5 "$T/log")"
fi
P=$D/usr/local
missing=""
for f in bin/argus include/argus.h lib/pkgconfig/argus.pc \
    lib/libargus.so.1 lib/libargus.so share/man/man1/argus.1 \
    share/man/man1/argus-record.1 share/man/man3/libargus.3 \
    share/man/man5/argus-trace.5 share/bash-completion/completions/argus \
    lib/systemd/system/argus.service; do
	[ -e "$P/$f" ] || missing="$missing $f"
done
[ -z "$missing" ] && ok "installed under PREFIX=/usr/local" ||
	nok "installed under PREFIX=/usr/local" "missing:$missing"
for m in man/*.[1-9]; do
	s=${m##*.}
	[ -f "$P/share/man/man$s/${m#man/}" ] || missing="$missing $m"
done
[ -z "$missing" ] && ok "every man page installed" ||
	nok "every man page installed" "missing:$missing"

# the soname: a real file, the .so.1 link to it and the dev link
real=$(readlink -f "$P/lib/libargus.so")
so=$(readelf -d "$real" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ -f "$real" ] && [ ! -L "$real" ] && [ -L "$P/lib/libargus.so.1" ] &&
    [ -L "$P/lib/libargus.so" ] && [ "$so" = libargus.so.1 ] &&
    [ "$(readlink "$P/lib/libargus.so")" = libargus.so.1 ]; then
	ok "libargus soname and links"
else
	nok "libargus soname and links" "real=$real soname=$so" \
	    "$(ls -l "$P/lib" 2>&1)"
fi

# a program against the installed header and pkg-config file
cat > "$T/prog.c" <<'C'
#include <argus.h>
#include <stdio.h>

int
main(void)
{
	argus_mark("installed", 42);
	argus_task_submit(1, 2);
	printf("enabled=%d\n", argus_enabled() ? 1 : 0);
	return 0;
}
C
export PKG_CONFIG_PATH="$P/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$D"
flags=$(pkg-config --cflags --libs argus 2>&1)
case $flags in
*"-I$P/include"*"-L$P/lib"*"-largus"*|*"-L$P/lib"*"-largus"*"-I$P/include"*|\
*"-I$P/include"*"-largus"*)
	ok "pkg-config --cflags --libs argus" ;;
*)	nok "pkg-config --cflags --libs argus" "$flags" ;;
esac
[ "$(pkg-config --modversion argus)" = "$($ARGUS --version | cut -d' ' -f2)" ] &&
	ok "argus.pc version" || nok "argus.pc version" "$(pkg-config --modversion argus)"
# shellcheck disable=SC2086
if cc -o "$T/prog" "$T/prog.c" $flags 2> "$T/cc.err"; then
	need=$(readelf -d "$T/prog" | sed -n 's/.*(NEEDED).*\[\(libargus[^]]*\)\].*/\1/p')
	out=$(LD_LIBRARY_PATH="$P/lib" "$T/prog" 2>&1)
	case $out in
	enabled=[01])
		[ "$need" = libargus.so.1 ] && ok "program built with pkg-config runs" ||
			nok "program built with pkg-config runs" "needs '$need'" ;;
	*)	nok "program built with pkg-config runs" "$out" ;;
	esac
else
	nok "program built with pkg-config runs" "$(head -n 5 "$T/cc.err")"
fi
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR

# the installed binary runs and lists the commands it completes
"$P/bin/argus" --version | grep -q '^argus ' && ok "installed binary runs" ||
	nok "installed binary runs"
if command -v bash > /dev/null; then
	comp=$P/share/bash-completion/completions/argus
	# complete WORDS...: the completions of the last word
	complete_words() {
		bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1));
		    _argus; printf "%s\n" "${COMPREPLY[@]}"' sh "$comp" "$@"
	}
	bad=""
	for c in $("$P/bin/argus" --help | sed -n 's/^   \([a-z]*\) .*/\1/p'); do
		complete_words argus "$c" | grep -qx "$c" || bad="$bad $c"
		for o in $("$P/bin/argus" "$c" --help 2>/dev/null |
		    grep -o -- '--[a-z][a-z-]*' | sort -u); do
			complete_words argus "$c" "$o" | grep -qx -- "$o" ||
				bad="$bad $c:$o"
		done
	done
	[ -z "$bad" ] && ok "bash completion knows every command and option" ||
		nok "bash completion knows every command and option" "missing:$bad"
	[ "$(complete_words argus record --events f)" = full ] &&
		ok "bash completion of values" || nok "bash completion of values"
fi

if $MAKE -s --no-print-directory uninstall B="$B" BIN="$ARGUS" DESTDIR="$D" \
    > "$T/log" 2>&1 && [ -z "$(files "$D")" ]; then
	ok "uninstall leaves no file"
else
	nok "uninstall leaves no file" "$(files "$D" | head -n 10)"
fi

# another PREFIX: the unit and argus.pc name it
D2=$T/dest2
$MAKE -s --no-print-directory install B="$B" BIN="$ARGUS" DESTDIR="$D2" \
    PREFIX=/opt/argus > "$T/log" 2>&1
if grep -q '^ExecStart=/opt/argus/bin/argus record' \
    "$D2/opt/argus/lib/systemd/system/argus.service" 2>/dev/null &&
    grep -q '^prefix=/opt/argus$' "$D2/opt/argus/lib/pkgconfig/argus.pc" &&
    [ -x "$D2/opt/argus/bin/argus" ]; then
	ok "PREFIX=/opt/argus"
else
	nok "PREFIX=/opt/argus" "$(tail -n 5 "$T/log")" "$(files "$D2" | head)"
fi
$MAKE -s --no-print-directory uninstall B="$B" BIN="$ARGUS" DESTDIR="$D2" \
    PREFIX=/opt/argus > /dev/null 2>&1
[ -z "$(files "$D2")" ] && ok "uninstall with PREFIX" ||
	nok "uninstall with PREFIX" "$(files "$D2" | head -n 10)"
