# bash completion for argus(1): the subcommands, their options, and the
# values some options take (event sets, export formats, files, traces).
# Installed by `make install` into bash-completion's completions folder.

_argus_opts() {
	case $1 in
	record|start)
		echo "-o --output --size --segment --duration --events --buffer-kb
		    --group --backend --no-instrument --net --netns --cgroup --host --stacks --stack-depth --stack-rate --snapshot-on-hang --snapshot-max
		    --snapshot-size -q --quiet -h --help" ;;
	stop|status) echo "-o --output -h --help" ;;
	diagnose) echo "--pid --tid --comm --at --threshold --pick --rules --json --whole --stream
		    --memory --critical-path --stats --stack-depth -h --help" ;;
	debug) echo "--pid --tid --comm --at --rules --no-default-rules --list-keys
		    -h --help" ;;
	info) echo "--segments --threads --events -h --help" ;;
	dump) echo "--from --to --tid --pid --type --abs -h --help" ;;
	graph) echo "--rules --no-default-rules --print-rules --check --stats
		    --dot --depth --suspects --limit --memory -h --help" ;;
	probe) echo "add list del --instance -h --help" ;;
	watch) echo "--len --read --write --marker --duration --print
		    -h --help" ;;
	snapshot) echo "-o --output --last -h --help" ;;
	export) echo "--format -o --output --from --to --pid --diagnose
		    --no-diagnosis --rules --no-default-rules --memory -h --help" ;;
	esac
}

_argus() {
	local cur prev cmd
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	COMPREPLY=()
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "record start stop status snapshot
		    diagnose debug export info dump graph probe watch --help
		    --version" -- "$cur"))
		return
	fi
	cmd=${COMP_WORDS[1]}
	case $prev in
	--events) COMPREPLY=($(compgen -W "sched default full" -- "$cur")); return ;;
	--format) COMPREPLY=($(compgen -W "chrome" -- "$cur")); return ;;
	--backend) COMPREPLY=($(compgen -W "auto bpf tracefs" -- "$cur")); return ;;
	--group) COMPREPLY=($(compgen -g -- "$cur")); return ;;
	--type) COMPREPLY=($(compgen -W "switch waking wakeup_new fork exec
	    exit sys_enter sys_exit user stack fd thread lost filelock" -- "$cur")); return ;;
	-o|--output|--snapshot-on-hang|--rules|--dot)
		COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--cgroup) COMPREPLY=($(compgen -d -- "$cur")); return ;;
	--pid|--tid|--comm|--at|--from|--to|--size|--segment|--duration|\
	--buffer-kb|--threshold|--pick|--depth|--limit|--last|--len|\
	--marker|--instance|--snapshot-max|--snapshot-size)
		return ;;
	esac
	case $cur in
	-*) COMPREPLY=($(compgen -W "$(_argus_opts "$cmd")" -- "$cur")) ;;
	*)
		if [ "$cmd" = probe ] && [ "$COMP_CWORD" -eq 2 ]; then
			COMPREPLY=($(compgen -W "add list del" -- "$cur"))
		else
			COMPREPLY=($(compgen -f -- "$cur"))
		fi ;;
	esac
}
complete -F _argus argus
