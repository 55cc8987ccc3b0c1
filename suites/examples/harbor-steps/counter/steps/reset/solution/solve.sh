#!/bin/sh
cat > /app/counter.sh <<'SCRIPT'
#!/bin/sh
if [ "$1" = reset ]; then echo 0 > /app/.count; exit 0; fi
n=$(cat /app/.count 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > /app/.count
echo "$n"
SCRIPT
