#!/bin/bash
# Here-documents, with and without expansion, and a function that makes text.
name=world
greet() {
	cat <<EOT
Hello, $name!
Today has $(( 24 * 60 )) minutes.
EOT
}
greet
cat <<'EOT'
literal $name and $(not run)
EOT
tr a-z A-Z <<< "here string"
